// Counting and validation of StackSpec, following docs/conventions.md.
#include "theory/stack_spec.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "vocab/block_eval.hpp"
#include "vocab/builtin_blocks.hpp"
#include "vocab/names.hpp"
#include "vocab/sublayer_layout.hpp"

namespace normsim::theory {
namespace {

void fail(const std::string& key, const std::string& why) {
  throw std::invalid_argument("theory::StackSpec." + key + ": " + why);
}

}  // namespace

int block_size(const StackSpec& s) {
  return vocab::layout(s.sublayer).size;
}
int block_count(const StackSpec& s) {
  return s.depth / block_size(s);
}
int block_of(const StackSpec& s, int k) {
  return k / block_size(s);
}

namespace {
// Whether a sublayer of the block runs Fqkv (the value norm, Branch::attention_value_norm).
bool reads_qkv_norm(const vocab::Block& b) {
  for (const vocab::Expr& e : b.sublayers)
    for (const vocab::ExprNode& n : e.nodes)
      if (n.op == vocab::ExprNode::Op::branch_qkv) return true;
  return false;
}

// Fv (docs/theory_notes.md "Value residual" [DERIVED]): the mixed values' Gram is linear in the two inputs'
// Grams only for plain uniform attention with one set of gains.
void validate_value_residual(const StackSpec& s) {
  if (s.placement == Placement::admin || !vocab::reads_first_values(block_of_spec(s))) return;
  const std::string why = "a block with Fv (the value residual): ";
  if (s.attention_gate != vocab::AttentionGate::none)
    fail("attention_gate", why + "the output gate reads u_n beside the mixed values; not derived");
  if (s.bias_sq > 0.0) fail("init_bias", why + "the mixed value biases are not derived (zero biases are)");
  if (s.random_update_scale > 0.0)
    fail("update", why + "the branch's tangent under a random update (output_change) is not derived");
  if (!s.sigma_sq_per_layer.empty())
    fail("param_rules",
         why +
             "gains that vary with the layer weigh V_1 by its source's sigma_V^2 and the mixing "
             "layer's sigma_O^2, which one branch gain cannot say; not implemented");
}

// A block of n > 1 lanes or one that reads emb carries their joint Gram (theory/placements/lanes.cpp,
// docs/design/multistream.md 3.4); what that path does not carry is refused.
void validate_lanes(const StackSpec& s) {
  const vocab::Block b = block_of_spec(s);
  if (b.lanes() == 1 && !vocab::reads_embedding(b)) return;
  const std::string what = b.lanes() > 1 ? "a block of " + std::to_string(b.lanes()) + " lanes"
                                         : std::string("a block that reads emb");
  if (vocab::reads_first_values(b))
    fail("block", what +
                      " with Fv (the value residual): the edge into V_1's source is not carried through the "
                      "lanes' backward program; not implemented");
  if (vocab::is_pointwise(s.norm))
    fail("norm", what +
                     " with a pointwise norm (DyT, Derf): the mean part and remainders of its outputs are "
                     "not carried between units in the lanes' joint Gram; not implemented");
  if (s.random_update_scale > 0)
    fail("update", what +
                       " under a random update: the joint Gram of the lanes' changes is not carried; "
                       "not implemented");
}

}  // namespace

vocab::Block block_of_spec(const StackSpec& s) {
  if (s.placement == Placement::admin) throw std::invalid_argument("admin is code, not an expression");
  return vocab::parse_block(s.block.empty() ? vocab::builtin_block(s.placement) : std::string_view(s.block));
}

double parameter(const StackSpec& s, const std::string& name) {
  if (const auto p = s.params.find(name); p != s.params.end()) return p->second;
  if (name == "deepnorm_alpha") return s.deepnorm_alpha ? *s.deepnorm_alpha : std::pow(double(s.depth), 0.25);
  if (name == "mix_fraction") return s.mix_fraction;
  if (name == "rezero_alpha") return s.rezero_alpha;
  if (name == "spannorm_lambda") return s.spannorm_lambda;
  throw std::invalid_argument("theory::StackSpec: no value for '" + name + "'");
}

bool ends_in_norm(const StackSpec& s) {
  if (s.placement == Placement::admin) return true;
  const vocab::Block b = block_of_spec(s);
  if (b.lanes() > 1) return false;  // the output reads the lanes' sum (sim/stack_build.cpp), never a norm
  const int k = s.depth - 1;
  vocab::ScalarEnv env;
  env.k = k, env.K = s.depth, env.b = block_of(s, k), env.L = block_count(s);
  env.attention = vocab::layout(s.sublayer).attends_at(k);
  env.param = [&s](const std::string& name) { return parameter(s, name); };
  const int unit = vocab::unit_size(b, s.sublayer);
  return vocab::ends_in_norm(b.sublayers[vocab::expression_at(b, unit, k % unit)], env);
}

bool has_final_norm(const StackSpec& s) {
  return s.final_norm && !ends_in_norm(s);
}

void validate(const StackSpec& s) {
  if (s.placement != Placement::admin) validate_lanes(s);
  if (s.depth < 1) fail("depth", "must be >= 1");
  if (s.tokens < 1) fail("tokens", "must be >= 1");
  if (s.mlp_ratio <= 0.0) fail("mlp_ratio", "must be > 0");
  if (s.v0 <= 0.0 || !std::isfinite(s.v0)) fail("v0", "must be finite and > 0");
  if (s.rho0 < -1.0 || s.rho0 > 1.0) fail("rho0", "must lie in [-1, 1]");
  if (s.gamma <= 0.0) fail("gamma", "must be > 0");
  // DyT and Derf (docs/theory_notes.md "Pointwise norms" [DERIVED]): what their mean field does not cover.
  if (vocab::is_pointwise(s.norm)) {
    const std::string n = "norm = " + std::string(vocab::name(s.norm)) + ": ";
    if (s.placement == Placement::admin)
      fail("placement", n + "admin's mean field is written for a per-token rescaling; not implemented");
    if (s.sublayer == SublayerKind::decoder)
      fail("sublayer",
           n + "the decoder's encoder output passes a pointwise norm, which cross-attention's mean field "
               "(theory/cross_attention.hpp) does not model; not implemented");
    if (s.input_norm)
      fail("input_norm", n + "x_0 would leave the pointwise norm non-Gaussian, which the Gaussian "
                             "expectations of every later norm assume; not implemented");
    if (s.loss == Loss::mse && (has_final_norm(s) || ends_in_norm(s)))
      fail("loss", n + "mse: y = gamma f(.) does not lie on a sphere, so J^T y != 0 and the gradient "
                       "correlates with y (the lemma the mse mean field uses fails); not implemented");
    vocab::parse_scalar(s.norm_alpha), vocab::parse_scalar(s.norm_shift);  // throws when malformed
    if (!std::isfinite(s.final_norm_alpha) || !std::isfinite(s.final_norm_shift))
      fail("final_norm_alpha", "final_norm_alpha and final_norm_shift must be finite");
  }
  if (!(s.bias_sq >= 0.0) || !std::isfinite(s.bias_sq)) fail("init_bias", "must be finite and >= 0");
  if (s.bias_sq > 0.0 && s.sublayer != SublayerKind::mlp) {
    const std::string why = "biases of variance > 0 with attention: ";
    if (s.attention_gate != vocab::AttentionGate::none)
      fail("init_bias", why +
                            "the output gate's sigmoid moments at a biased input are not derived; not "
                            "implemented (zero biases are)");
    if (reads_qkv_norm(block_of_spec(s)))
      fail("init_bias", why +
                            "a value bias passes the per-head value norm (Fqkv), whose moments with it are "
                            "not derived; not implemented (zero biases are)");
  }
  if (s.moe_experts > 0 && s.sublayer != SublayerKind::attention) {
    if (s.moe_top_k < 1 || s.moe_top_k > s.moe_experts) fail("moe_top_k", "must lie in 1 .. moe_experts");
    if (s.random_update_scale > 0)
      fail("moe_experts",
           "a routed MLP under a random update: its mean field (the tangent) is not implemented");
    if (!(s.router_sigma_sq >= 0.0) || !std::isfinite(s.router_sigma_sq))
      fail("router_sigma_sq", "must be finite and >= 0");
  }
  if (!(s.eps >= 0.0) || !std::isfinite(s.eps)) fail("eps", "must be finite and >= 0");
  if (s.mix_fraction < 0.0 || s.mix_fraction > 1.0) fail("mix_fraction", "must lie in [0, 1]");
  if (s.deepnorm_alpha && *s.deepnorm_alpha <= 0.0) fail("deepnorm_alpha", "must be > 0");
  validate_value_residual(s);
  const bool paired = s.placement != Placement::admin && block_of_spec(s).span() == 2;
  const int unit = std::max(vocab::unit_sublayers(paired ? 2 : 1, s.sublayer), block_size(s));
  if (s.depth % unit != 0)
    fail("depth", "must be a multiple of " + std::to_string(unit) +
                      ", the sublayers of one block or placement unit (vocab/sublayer_layout.hpp)");
  if (s.encoder_cos < 0.0 || s.encoder_cos > 1.0) fail("encoder_cos", "must lie in [0, 1]");
  const auto gains_valid = [](const WeightGains& w) {
    for (double g : {w.w1, w.wgate, w.w2, w.wq, w.wk, w.wv, w.wo})
      if (!(g >= 0.0) || !std::isfinite(g)) return false;
    return true;
  };
  if (!gains_valid(s.sigma_sq)) fail("sigma_sq", "every gain^2 must be finite and >= 0");
  const auto per_layer = [&](std::size_t n) { return n == 0 || n == std::size_t(s.depth); };
  if (!per_layer(s.sigma_sq_per_layer.size()) || !per_layer(s.branch_multiplier.size()))
    fail("sigma_sq_per_layer", "per-sublayer gains and branch multipliers are empty or one per sublayer");
  for (const WeightGains& w : s.sigma_sq_per_layer)
    if (!gains_valid(w)) fail("sigma_sq_per_layer", "every gain^2 must be finite and >= 0");
  for (double m : s.branch_multiplier)
    if (!std::isfinite(m)) fail("branch_multiplier", "must be finite");
}

}  // namespace normsim::theory
