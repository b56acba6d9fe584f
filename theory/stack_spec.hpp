// The theory's own description of a residual stack (it must not see sim::Config): the placements,
// branches, inits and inputs of docs/conventions.md, reduced to what the mean field needs.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "theory/activation.hpp"
#include "vocab/block_expr.hpp"
#include "vocab/enums.hpp"

namespace normsim::theory {

using Placement = vocab::Placement;
using SublayerKind = vocab::Sublayer;
using NormKind = vocab::Norm;
using Loss = vocab::Loss;

// Gains^2 = fan_in * Var(W) per weight kind (theory.md §0), already including scaled init and DeepNorm's
// beta (each beta-scaled matrix carries beta^2 here).
struct WeightGains {
  double w1 = 1.0, wgate = 1.0, w2 = 1.0, wq = 1.0, wk = 1.0, wv = 1.0, wo = 1.0;
  double wga = 1.0;  // the attention output gate's W_g (read only with attention_gate)
};

struct StackSpec {
  Placement placement = Placement::pre;
  SublayerKind sublayer = SublayerKind::mlp;
  Activation activation = Activation::relu;
  int depth = 8;           // K residual sublayers
  int width = 512;         // d; <= 0 means infinite width (drops the final norm's 1 - c/d)
  int tokens = 16;         // T
  double mlp_ratio = 4.0;  // d_ff = round(mlp_ratio * d)
  int heads = 4;           // unused by the uniform-attention value path; kept for the record
  bool causal = false;
  // Norm of Q and K (the qk_norm key), per head or over the whole projection (qk_norm_scope, OLMo-2): either
  // acts on the logits only, which the uniform-attention value path ignores, so no prediction reads it; it
  // is kept for the record and the caveats.
  bool qk_norm = false;
  // The self-attentions' output gate sigmoid(u W_g) (attention_gate): elementwise and headwise have one mean
  // field (docs/theory_notes.md §"Attention output gate").
  vocab::AttentionGate attention_gate = vocab::AttentionGate::none;
  WeightGains sigma_sq;
  double v0 = 1.0;    // input second moment per coordinate (before input_norm)
  double rho0 = 0.0;  // input token cosine
  // A readout matrix z = y W_out (docs/design/parametrization.md 3.4): the readout loss's gradient at y is
  // g W_out^T, g iid N(0, 1) over output_width logits, so its tokens stay uncorrelated and its second moment
  // per coordinate is readout_sq = output_width Var(W_out) (the multiplier folded in) instead of 1. Absent:
  // the loss reads y. An mse loss through it is not predicted (its gradient at y is y W_out W_out^T - t
  // W_out^T, which correlates with y).
  std::optional<double> readout_sq;
  double encoder_cos = 0.0;  // decoder: token cosine of the fixed encoder output (theory/cross_attention.hpp)
  bool input_norm = false;
  bool final_norm = true;  // applied only where the placement does not end in a norm
  double gamma = 1.0;      // gain of every norm at init
  // The norms' epsilon: N(x) = gamma x / sqrt(s^2 + eps), s^2 the input's per-token second moment (variance
  // for LayerNorm). It matters where s^2 is not >> eps (docs/theory_notes.md §eps); 0 reproduces the
  // eps -> 0 mean field bit for bit.
  double eps = 0.0;
  NormKind norm = NormKind::layernorm;
  // DyT / Derf (norm pointwise): y = gamma f(alpha x + shift). The norms of sublayer k take the expressions
  // norm_alpha and norm_shift evaluated at k (the names they read go in params), the final norm
  // final_norm_alpha and final_norm_shift (sim/norm_site.hpp). Unused by LayerNorm and RMSNorm.
  std::string norm_alpha = "0.5", norm_shift = "0";
  double final_norm_alpha = 0.5, final_norm_shift = 0.0;
  std::optional<double> deepnorm_alpha;  // nullopt: K^(1/4) (docs/conventions.md)
  double mix_fraction = 0.25;
  double rezero_alpha = 0.0;
  double spannorm_lambda = 1.0;
  // The placement's block expression (vocab/block_expr.hpp): "" for a built-in's own
  // (vocab/builtin_blocks.hpp); required for placement custom. branch_scale multiplies every branch output.
  std::string block;
  std::string branch_scale = "1";
  // Values of other config names an expression reads (beyond deepnorm_alpha, mix_fraction, rezero_alpha,
  // spannorm_lambda above).
  std::map<std::string, double, std::less<>> params;
  Loss loss = Loss::readout;
  // A routed MLP (the moe_* keys; theory/routing.hpp): E experts, every MLP branch; 0 a dense MLP. Forward
  // metrics only: the mean field predicts no backward metric for it.
  int moe_experts = 0;
  int moe_top_k = 2;
  bool moe_renormalized = true;
  double router_sigma_sq = 1.0;  // fan_in Var(Wr)
  // A parametrization (docs/parametrizations.md) whose gains vary with the sublayer: sublayer k's gains and
  // its branch multiplier (times branch_scale). Empty: sigma_sq at every sublayer, multiplier 1.
  std::vector<WeightGains> sigma_sq_per_layer;
  std::vector<double> branch_multiplier;
  double m_N = 1.0, m_L = 1.0;  // width / base_width and depth / base_depth, which expressions may read
  // Every matrix's bias variance sigma_b^2 (bias = true: init_bias^2; 0 without biases or with zero ones,
  // whose forward and backward at init are the bias-free ones). Modelled for MLP and uniform-attention
  // branches (Branch::biased); validate() refuses it through the attention output gate or the value norm.
  double bias_sq = 0.0;
  // update = "random": the relative size of every matrix's perturbation (output_change); 0: no such update.
  double random_update_scale = 0.0;
};

// Transformer layers L (K/2 for transformer stacks, K/3 for decoders, K otherwise) and the block index b(k).
int block_count(const StackSpec& s);
int block_of(const StackSpec& s, int k);
// Sublayers per block: 2 (transformer), 3 (decoder: self-attention, cross-attention, MLP), else 1.
int block_size(const StackSpec& s);
// The block expression of the spec's placement (its own, or `block`), parsed; throws std::invalid_argument.
vocab::Block block_of_spec(const StackSpec& s);
// The value of a name an expression reads (deepnorm_alpha: K^(1/4) unless given); throws when unknown.
double parameter(const StackSpec& s, const std::string& name);
// Whether the last sublayer ends in a norm, and whether the final norm is applied (docs/conventions.md).
bool ends_in_norm(const StackSpec& s);
bool has_final_norm(const StackSpec& s);
// Throws std::invalid_argument with the offending key when the spec is not a valid stack.
void validate(const StackSpec& s);

}  // namespace normsim::theory
