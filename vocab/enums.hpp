// The typed vocabulary of normsim: every name a config may give for a placement, sublayer, activation,
// norm, loss or init rule, as an enum. Parsed once at the config's edge (vocab/names.hpp); everything past
// it compares enums, never strings. Plain enums, no includes: CUDA device code includes this header.
#pragma once

namespace normsim::vocab {

// Where the norms sit; `custom` is a block given as an expression (docs/placements.md).
enum class Placement {
  post,
  pre,
  peri,
  mix,
  b2t,
  deepnorm,
  spannorm,
  hybridnorm,
  hybridnorm_star,
  lnscale,
  admin,
  rezero,
  none,
  olmo2,
  custom
};
// Where a placement's norm sits (docs/theory.md §2), which groups placements in figures: after the residual
// add, on the branch (its input, output or both) with an un-normalized stream, both in one stack, or nowhere.
enum class PlacementFamily { stream_norm, branch_norm, mixed, no_norm };
enum class Sublayer { mlp, attention, transformer, decoder };
// swiglu is a branch shape (a gated MLP with silu), not a pointwise map.
enum class Activation { relu, gelu, silu, tanh, linear, swiglu };
// layernorm and rmsnorm normalize each token (a row); dyt and derf are pointwise maps that replace them in
// normalization-free transformers (DyT: Zhu et al. 2025; Derf: Chen et al. 2025), with an alpha and a shift.
enum class Norm { layernorm, rmsnorm, dyt, derf };
constexpr bool is_pointwise(Norm n) {
  return n == Norm::dyt || n == Norm::derf;
}
enum class Loss { readout, mse };
enum class Init { fanin, xavier, fixed, unit };
// Whether the output y is N(x_K): auto applies it when the placement does not end in a norm.
enum class FinalNorm { auto_, always, never };
// The parameter update whose effect on the stream the metric output_change measures
// (sim/cpu/weight_update.hpp).
enum class Update { none, random, sgd, adam };
// The batch each training step reads (steps > 0): batch 0 again (microsoft/mup's fix_data, coord_check.py
// l.284-286), or a fresh draw per step (step s in the Philox layer word of the input and loss draws).
enum class Batches { fixed, fresh };
// How attention logits q.k are scaled: 1/sqrt(d_h) (the standard), or 1/d_h (muP); then by 1/temperature.
enum class LogitScaling { sqrt, mup };
// Gated attention (Qiu et al. 2025): the attention output times sigmoid(u W_g) before W_O, one gate per
// coordinate (elementwise) or per head (headwise), or none.
enum class AttentionGate { none, elementwise, headwise };
// A routed MLP's gates: the top-k softmax probabilities renormalized to sum 1 (Mixtral), or as they are
// (OLMoE's norm_topk_prob = False, Switch's top-1).
enum class MoeGate { renormalized, softmax };
// What qk_norm normalizes: each head's slice of Q and K (width d/heads), or the whole projection (width d)
// before the heads are split (OLMo-2).
enum class QkNormScope { head, projection };
// The simulation's floating-point type (tf32: float32 storage, TF32 tensor-core products; CUDA only. bf16:
// torch.autocast's bfloat16, products on bf16 inputs and outputs with float32 accumulation; sim/bf16.hpp).
enum class Precision { float32, float64, tf32, bf16 };
// Whether the backward draws the weights again instead of keeping them from the forward (config names
// "auto", "true", "false").
enum class Recompute { auto_, yes, no };
// Which backend computes (a command-line and Python option, not a config key): auto picks CUDA when this
// build has it and a usable device exists, else the CPU; reference is only ever chosen by name.
enum class BackendChoice { auto_, cpu, cuda, reference };

}  // namespace normsim::vocab
