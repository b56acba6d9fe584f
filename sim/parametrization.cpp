// Parametrization rules resolved per matrix (sim/parametrization.hpp).
#include "sim/parametrization.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sim/edges.hpp"
#include "sim/placements/expression.hpp"
#include "vocab/builtin_parametrizations.hpp"

namespace normsim::sim {

namespace {

bool is_out_proj(WeightKind w) {
  return w == WeightKind::w2 || w == WeightKind::wo || w == WeightKind::co;
}

// Whether selector `sel` names matrix w of a sublayer (edge "") or the edge matrix `edge`.
bool selects(const std::string& sel, WeightKind w, std::string_view edge) {
  if (sel == "all") return true;
  if (!edge.empty()) return sel == edge;
  if (sel == "hidden") return true;
  if (sel == "out_proj") return is_out_proj(w);
  if (sel == "in_proj") return !is_out_proj(w);
  return sel == weight_name(w);
}

bool any_selects(const vocab::ParamAssignment& a, WeightKind w, std::string_view edge) {
  return std::any_of(a.selectors.begin(), a.selectors.end(),
                     [&](const std::string& sel) { return selects(sel, w, edge); });
}

std::string fmt(double x) {
  return format_value(KeyValue(x));
}

}  // namespace

std::string parametrization_text(const Config& c) {
  std::string text;
  if (const auto* preset = vocab::find_parametrization(c.parametrization))
    text = vocab::preset_rules(*preset);
  if (c.parametrization != "none" && !c.param_rules.empty())
    text += (text.empty() ? "" : "; ") + c.param_rules;
  return text;
}

std::vector<WeightKind> matrices_at(const StackShape& s, int k) {
  std::vector<WeightKind> out = s.weights(k);
  if (s.experts > 0 && s.branch(k) == BranchKind::mlp) out.push_back(WeightKind::wrouter);
  return out;
}

ResolvedRules::ResolvedRules(const StackShape& s) {
  try {
    rules_ = vocab::parse_param_rules(parametrization_text(s.cfg));
  } catch (const vocab::ExprError& e) {
    throw std::invalid_argument(std::string("parametrization rules: ") + e.what());
  }
  per_matrix_.resize(std::size_t(s.depth));
  branch_mult_.assign(std::size_t(s.depth), 1.0);
  for (int k = 0; k < s.depth; ++k) {
    vocab::ScalarEnv env = scalar_env(s, k);
    for (const WeightKind w : matrices_at(s, k)) {
      env.fan_in = s.fan_in(w), env.fan_out = s.fan_out(w);
      per_matrix_[std::size_t(k)][std::size_t(w)] = evaluate(s.cfg, env, w, "");
    }
    env.fan_in = env.fan_out = 0;  // a branch rule reads no matrix
    for (const auto& a : rules_)
      if (std::find(a.selectors.begin(), a.selectors.end(), "branch") != a.selectors.end())
        branch_mult_[std::size_t(k)] = vocab::eval_scalar(a.value, a.value.root, env);
  }
}

MatrixRule ResolvedRules::evaluate(const Config& c, const vocab::ScalarEnv& env, WeightKind w,
                                   std::string_view edge) const {
  MatrixRule r{std::nullopt, 1.0, c.update_lr, c.update_lr, c.adam_eps};
  for (const auto& a : rules_) {
    if (!any_selects(a, w, edge)) continue;
    const double v = vocab::eval_scalar(a.value, a.value.root, env);
    switch (a.field) {
      case vocab::ParamField::std:
        r.std = v;
        break;
      case vocab::ParamField::mult:
        r.mult = v;
        break;
      case vocab::ParamField::lr_sgd:
        r.lr_sgd = v;
        break;
      case vocab::ParamField::lr_adam:
        r.lr_adam = v;
        break;
      case vocab::ParamField::eps:
        r.eps = v;
        break;
    }
  }
  return r;
}

MatrixRule ResolvedRules::edge(const StackShape& s, std::string_view edge, double fan_in,
                               double fan_out) const {
  vocab::ScalarEnv env = scalar_env(s, 0);
  env.fan_in = fan_in, env.fan_out = fan_out;
  return evaluate(s.cfg, env, WeightKind::w1, edge);
}

std::string check_param_rules(const KeyValue& v) {
  const auto& text = std::get<std::string>(v);
  try {
    vocab::check_expression_length(text);
    for (const auto& a : vocab::parse_param_rules(text)) {
      for (const auto& n : a.value.nodes)
        if (n.op == vocab::ExprNode::Op::param)
          if (std::string why = unknown_parameter(n.name); !why.empty())
            return "column " + std::to_string(a.column + n.column - 1) + ": " + why;
    }
  } catch (const vocab::ExprError& e) {
    return e.what();
  }
  return "";
}

namespace {
// Why param_rules (not a preset: presets are data for every stack) sets a rule for an edge matrix the
// configuration does not have, where it would be ignored; "" when none does.
std::string missing_edge(const Config& c) {
  for (const auto& a : vocab::parse_param_rules(c.param_rules))
    for (const auto& sel : a.selectors)
      if (vocab::is_edge_selector(sel) && !has_edge(c, sel == "embedding" ? Edge::embedding : Edge::readout))
        return "column " + std::to_string(a.selector_column) + ": a rule for the " + sel +
               " matrix, which this configuration does not have (" +
               (sel == "embedding" ? "input_width and vocab are 0" : "output_width is 0") +
               "; docs/parametrizations.md): it would be ignored";
  return "";
}

// Why a resolved field is impossible ("" when every std and multiplier is a finite number >= 0).
std::string bad_value(const StackShape& s, const ResolvedRules& r) {
  for (int k = 0; k < s.depth; ++k) {
    const std::string at = " at sublayer " + std::to_string(k);
    if (!std::isfinite(r.branch_mult(k))) return "the branch multiplier is " + fmt(r.branch_mult(k)) + at;
    for (const WeightKind w : matrices_at(s, k)) {
      const MatrixRule& m = r.at(k, w);
      const std::string name = std::string(weight_name(w));
      if (m.std && !(*m.std >= 0 && std::isfinite(*m.std)))
        return "std of " + name + at + " is " + fmt(*m.std) + " (must be a finite number >= 0)";
      if (!std::isfinite(m.mult)) return "mult of " + name + at + " is " + fmt(m.mult);
    }
  }
  for (const Edge e : {Edge::embedding, Edge::readout})
    if (has_edge(s.cfg, e) && !(edge_std(s, e) >= 0 && std::isfinite(edge_std(s, e))))
      return "the " + std::string(edge_name(e)) + " matrix's std times its multiplier is " +
             fmt(edge_std(s, e)) + " (must be a finite number >= 0)";
  return "";
}
}  // namespace

std::vector<ConfigIssue> parametrization_issues(const Config& c) {
  if (c.parametrization == "none") {
    if (c.param_rules.empty()) return {};
    return {
        {"param_rules",
         "rules need parametrization = \"custom\" (these rules alone) or a preset (its rules, then these)",
         {"parametrization"}}};
  }
  std::vector<ConfigIssue> issues;
  if ((c.update == vocab::Update::sgd || c.update == vocab::Update::adam) && c.steps == 0)
    issues.push_back({"update",
                      "a parametrization's per-matrix learning rates, epsilons and multipliers reach the "
                      "optimizer of the training loop (sim/train_loop.hpp), not the one update of steps = 0: "
                      "set steps >= 1 (steps = 1 is that one step, by the parametrization's rules)",
                      {"parametrization", "steps"}});
  if (std::string why = missing_edge(c); !why.empty()) issues.push_back({"param_rules", why, {}});
  const StackShape shape(c);
  if (std::string why = bad_value(shape, *shape.rules); !why.empty())
    issues.push_back({c.param_rules.empty() ? "parametrization" : "param_rules", why, {"parametrization"}});
  return issues;
}

}  // namespace normsim::sim
