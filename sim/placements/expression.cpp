#include "sim/placements/expression.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "sim/norm_site.hpp"
#include "sim/placements/all.hpp"

namespace normsim::sim {
namespace {

// The interpreter's stream operations on StackOps, at sublayer k.
struct OpsStreams {
  using Value = sim::Value;
  StackOps& ops;
  const StackShape& shape;
  int k;
  Value& first_values;  // V_1 (PlacementState::first_values)
  Value norm(Value a) { return ops.norm(a, norm_at(shape, k)); }
  Value add(Value a, Value b) { return ops.add(a, b); }
  Value scale(Value a, double s) { return ops.scale(a, s); }
  Value branch(Value u, bool qkv_norm) { return ops.branch(k, u, qkv_norm); }
  Value branch_value(Value u, double lam) { return ops.branch_value(k, u, lam, first_values); }
};

// The config key's value as a number; throws std::invalid_argument when it is missing or not numeric (the
// config's edge has refused both before, sim/run/expression_checks.hpp).
double numeric_key(const Config& c, const std::string& name) {
  bool found = false;
  std::optional<double> value;
  for_each_config_field([&](std::string_view field, auto member) {
    if (field != name) return;
    found = true;
    using T = std::remove_cvref_t<decltype(c.*member)>;
    if constexpr (std::is_same_v<T, double>)
      value = c.*member;
    else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
      value = double(static_cast<std::int64_t>(c.*member));  // as the key table reads an integer key
  });
  if (!found) throw std::invalid_argument("unknown parameter '" + name + "'");
  if (!value) throw std::invalid_argument("parameter '" + name + "' is not a number");
  return *value;
}

}  // namespace

vocab::ScalarEnv scalar_env(const StackShape& s, int k) {
  vocab::ScalarEnv env;
  env.k = k, env.K = s.depth, env.b = s.block(k), env.L = s.blocks();
  env.attention = s.branch(k) != BranchKind::mlp;  // self- or cross-attention
  env.m_N = double(s.width) / s.cfg.base_width, env.m_L = double(s.depth) / s.cfg.base_depth;
  env.param = [&s](const std::string& name) {
    if (name == "deepnorm_alpha") return deepnorm_alpha(s);
    if (name == "deepnorm_beta") return deepnorm_beta(s);
    return numeric_key(s.cfg, name);
  };
  return env;
}

ExpressionPlacement::ExpressionPlacement(vocab::Placement id, std::string_view block, std::string_view source,
                                         InitMultiplier init)
    : id_(id),
      block_(vocab::parse_block(block)),
      expression_(vocab::to_text(block_)),
      reads_embedding_(vocab::reads_embedding(block_)),
      reads_first_values_(vocab::reads_first_values(block_)),
      init_(init) {
  summary_ = expression_;
  if (!source.empty()) summary_ += "  (" + std::string(source) + ")";
}

bool ExpressionPlacement::ends_in_norm(const StackShape& s) const {
  if (lanes() > 1) return false;  // the output reads the lanes' sum, never a norm's output
  const int k = s.depth - 1, unit = vocab::unit_size(block_, s.cfg.sublayer);
  return vocab::ends_in_norm(block_.sublayers[vocab::expression_at(block_, unit, k % unit)],
                             scalar_env(s, k));
}

Value ExpressionPlacement::sublayer(StackOps& ops, const StackShape& s, int k, Value x,
                                    PlacementState& state) const {
  const int unit = vocab::unit_size(block_, s.cfg.sublayer), pos = k % unit;
  if (unit > 1 && pos == 0) state.saved = x;  // the unit's input, x0 of its expressions
  const vocab::Expr& e = block_.sublayers[vocab::expression_at(block_, unit, pos)];
  OpsStreams streams{ops, s, k, state.first_values};
  return vocab::eval_stream(e, e.root, streams, scalar_env(s, k), x, unit > 1 ? state.saved : x, state.emb);
}

Lanes ExpressionPlacement::sublayer_lanes(StackOps& ops, const StackShape& s, int k, const Lanes& x,
                                          PlacementState& state) const {
  if (lanes() == 1) return Placement::sublayer_lanes(ops, s, k, x, state);
  if (int(x.size()) != lanes())
    throw std::invalid_argument("a block of " + std::to_string(lanes()) + " lanes given " +
                                std::to_string(x.size()));
  const int unit = vocab::unit_size(block_, s.cfg.sublayer);
  const vocab::Expr& e = block_.sublayers[vocab::expression_at(block_, unit, k % unit)];
  OpsStreams streams{
      ops, s, k, state.first_values};  // x0 (the pair's input) is refused in a block of lanes by the parser
  return vocab::eval_lanes<OpsStreams>(e, streams, scalar_env(s, k), x, x.front(), state.emb);
}

}  // namespace normsim::sim
