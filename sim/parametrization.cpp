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

// Whether selector `sel` names matrix w of a sublayer (edge "") or the edge matrix `edge`.
bool selects(const std::string& sel, WeightKind w, std::string_view edge) {
  if (sel == "all") return true;
  if (!edge.empty()) return sel == edge;
  if (sel == "hidden") return true;
  if (sel == "out_proj") return writes_stream(w);
  if (sel == "in_proj") return !writes_stream(w);
  return sel == weight_name(w);
}

bool any_selects(const vocab::ParamAssignment& a, WeightKind w, std::string_view edge) {
  return std::any_of(a.selectors.begin(), a.selectors.end(),
                     [&](const std::string& sel) { return selects(sel, w, edge); });
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

}  // namespace normsim::sim
