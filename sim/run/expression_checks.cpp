// The checks of expressions and parametrization rules (sim/run/expression_checks.hpp).
#include "sim/run/expression_checks.hpp"

#include <algorithm>
#include <cmath>

#include "sim/edges.hpp"
#include "sim/parametrization.hpp"
#include "sim/placements/expression.hpp"
#include "vocab/block_expr.hpp"
#include "vocab/param_rules.hpp"

namespace normsim::sim {

std::string unknown_parameter(const std::string& name) {
  const KeyInfo* key = find_key(name);
  if (!key) {
    const std::string hint = suggest_key(name);
    return "unknown name '" + name +
           "' (not x, x0, emb, N, F, Fqkv, Fv, k, K, b, L, attention, m_N, m_L, sqrt, floor, sigmoid, "
           "sinkhorn "
           "or a "
           "config key)" +
           (hint.empty() ? "" : "; did you mean '" + hint + "'?");
  }
  if (key->type != KeyType::floating && key->type != KeyType::integer)
    return "config key '" + name + "' is not a number";
  return "";
}

// Why an expression's names are not all numbers it may read ("column C: why"), or "".
namespace {

std::string check_names(const vocab::Expr& e) {
  for (const auto& n : e.nodes)
    if (n.op == vocab::ExprNode::Op::param)
      if (std::string why = unknown_parameter(n.name); !why.empty())
        return "column " + std::to_string(n.column) + ": " + why;
  return "";
}

// A pair whose second expression never reads x throws the first expression's output away: its branch is
// dead (no gradient reaches its weights, and sgd/adam would have no step for them). Refused at the edge.
std::string dead_branch(const vocab::Block& b) {
  for (int j = 1; j < b.span(); ++j) {
    const vocab::Expr& e = b.sublayers[std::size_t(j)];
    if (vocab::always_reads_stream(e, e.root)) continue;
    int column = 0;
    for (const auto& n : e.nodes) column = column == 0 ? n.column : std::min(column, n.column);
    return "column " + std::to_string(column) +
           ": the second expression does not read x (on every arm of its conditions), so the first one's "
           "output can reach nothing (a dead branch: its weights would get no gradient); read x there";
  }
  return "";
}

}  // namespace

std::string check_block(const KeyValue& v) {
  const auto& s = std::get<std::string>(v);
  if (s.empty()) return "";
  try {
    vocab::check_expression_length(s);
    const vocab::Block block = vocab::parse_block(s);
    for (const vocab::Expr& e : block.sublayers)
      if (std::string why = check_names(e); !why.empty()) return why;
    if (std::string why = dead_branch(block); !why.empty()) return why;
  } catch (const vocab::ExprError& e) {
    return e.what();
  }
  return "";
}

std::string check_scalar_expression(const KeyValue& v) {
  try {
    vocab::check_expression_length(std::get<std::string>(v));
    return check_names(vocab::parse_scalar(std::get<std::string>(v)));
  } catch (const vocab::ExprError& e) {
    return e.what();
  }
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

std::string fmt(double x) {
  return format_value(KeyValue(x));
}

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
    issues.push_back(
        {"update",
         "a parametrization's per-matrix learning rates, epsilons and multipliers reach the "
         "optimizer of the training loop (sim/cpu/train_loop.hpp), not the one update of steps = 0: "
         "set steps >= 1 (steps = 1 is that one step, by the parametrization's rules)",
         {"parametrization", "steps"}});
  if (std::string why = missing_edge(c); !why.empty()) issues.push_back({"param_rules", why, {}});
  const StackShape shape(c);
  if (std::string why = bad_value(shape, *shape.rules); !why.empty())
    issues.push_back({c.param_rules.empty() ? "parametrization" : "param_rules", why, {"parametrization"}});
  return issues;
}

}  // namespace normsim::sim
