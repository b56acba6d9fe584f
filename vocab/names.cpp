// The name tables (vocab/names.hpp). Meanings are the ones `normsim list` prints.
#include "vocab/names.hpp"

#include <array>
#include <vector>

#include "vocab/builtin_blocks.hpp"

namespace normsim::vocab {

#define NORMSIM_VOCAB_TABLE(E, list)     \
  template <>                            \
  std::span<const Named<E>> table<E>() { \
    return list;                         \
  }

namespace {
using P = Placement;
// The built-ins' names come from their one definition (vocab/builtin_blocks.cpp), custom last.
std::span<const Named<P>> placement_names() {
  static const auto list = [] {
    std::vector<Named<P>> out;
    for (const auto& b : builtin_placements()) out.push_back({b.id, b.name, ""});
    out.push_back({P::custom, "custom", "the block given by the key `block` (docs/placements.md)"});
    return out;
  }();
  return list;
}
using PF = PlacementFamily;
constexpr std::array kPlacementFamilies{
    Named<PF>{PF::stream_norm, "stream-norm", "norm on the stream"},
    Named<PF>{PF::branch_norm, "branch-norm", "norm on the branch"},
    Named<PF>{PF::mixed, "mixed", "Post and Pre mixed"},
    Named<PF>{PF::no_norm, "no-norm", "no norm in the stack"},
};
using S = Sublayer;
constexpr std::array kSublayers{
    Named<S>{S::mlp, "mlp", "every sublayer is an MLP branch"},
    Named<S>{S::attention, "attention", "every sublayer is a multi-head self-attention branch"},
    Named<S>{S::transformer, "transformer", "attention (even k) and MLP (odd k) alternate; even depth"},
    Named<S>{S::decoder, "decoder",
             "self-attention (k = 3j), cross-attention to a fixed encoder output (3j+1), MLP (3j+2); depth a "
             "multiple of 3"},
};
using A = Activation;
constexpr std::array kActivations{
    Named<A>{A::relu, "relu", "max(0, u)"},
    Named<A>{A::gelu, "gelu", "u Phi(u), Phi the standard normal CDF"},
    Named<A>{A::silu, "silu", "u sigmoid(u)"},
    Named<A>{A::tanh, "tanh", "tanh(u)"},
    Named<A>{A::linear, "linear", "u (no nonlinearity)"},
    Named<A>{A::swiglu, "swiglu", "(silu(u Wgate) * (u W1)) W2: a gated MLP with a third matrix"},
};
constexpr std::array kNorms{
    Named<Norm>{Norm::layernorm, "layernorm", "(x - mean(x)) / sqrt(var(x) + eps) * gain"},
    Named<Norm>{Norm::rmsnorm, "rmsnorm", "x / sqrt(mean(x^2) + eps) * gain"},
    Named<Norm>{
        Norm::dyt, "dyt",
        "tanh(alpha x) * gain, pointwise (DyT, Zhu et al. 2025; alpha: norm_alpha, final_norm_alpha)"},
    Named<Norm>{
        Norm::derf, "derf",
        "erf(alpha x + shift) * gain, pointwise (Derf, Chen et al. 2025; norm_alpha, norm_shift, ...)"},
};
constexpr std::array kLosses{
    Named<Loss>{Loss::readout, "readout",
                "sum_{t,i} g[t,i] y[t,i], g ~ N(0,1) fixed per sample: dLoss/dy = g"},
    Named<Loss>{Loss::mse, "mse", "1/2 sum (y - target)^2, target ~ N(0,1)"},
};
constexpr std::array kInits{
    Named<Init>{Init::fanin, "fanin", "N(0, gain^2 / fan_in) (He/LeCun style)"},
    Named<Init>{Init::xavier, "xavier", "N(0, 2 gain^2 / (fan_in + fan_out)) (Glorot)"},
    Named<Init>{Init::fixed, "fixed", "N(0, std^2) with one std for every matrix (GPT-2's 0.02)"},
    Named<Init>{Init::unit, "unit",
                "nGPT: every vector along the embedding dimension (an input matrix's columns, an output "
                "matrix's rows) a Gaussian draw normalized to length gain (NVIDIA/ngpt train.py L394-408)"},
};
constexpr std::array kFinalNorms{
    Named<FinalNorm>{FinalNorm::auto_, "auto", "a final norm when the placement does not end in one"},
    Named<FinalNorm>{FinalNorm::always, "true", "always a final norm"},
    Named<FinalNorm>{FinalNorm::never, "false", "never a final norm"},
};
constexpr std::array kUpdates{
    Named<Update>{Update::none, "none", "no update: output_change is not measured"},
    Named<Update>{
        Update::random, "random",
        "dW a Gaussian direction with ||dW||_F = update_scale ||W||_F per matrix (own Philox draws)"},
    Named<Update>{Update::sgd, "sgd",
                  "SGD on the loss, dW = -update_lr dLoss/dW: one step (steps = 0), or `steps` steps"},
    Named<Update>{
        Update::adam, "adam",
        "Adam on the loss (Kingma & Ba 2015, Alg. 1): steps = 0, its first step dW = -update_lr g / "
        "(|g| + adam_eps); or `steps` steps with m and v kept"},
};
constexpr std::array kBatches{
    Named<Batches>{Batches::fixed, "fixed", "every step reads batch 0 (microsoft/mup's fix_data)"},
    Named<Batches>{Batches::fresh, "fresh",
                   "step s reads batch s: input, readout direction and target drawn anew (step 0: batch 0)"},
};
constexpr std::array kPrecisions{
    Named<Precision>{Precision::float32, "float32",
                     "weights, activations and gradients in float (metrics accumulated in double)"},
    Named<Precision>{Precision::float64, "float64", "everything in double"},
    Named<Precision>{Precision::tf32, "tf32",
                     "float32 storage, matrix products on TF32 tensor cores (CUDA backend only)"},
    Named<Precision>{Precision::bf16, "bf16",
                     "torch.autocast(dtype=bfloat16): weights, matrix products' inputs and outputs and the "
                     "activations on them rounded to bf16, float32 accumulation; residual stream, norms and "
                     "statistics in float32 (the CPU emulates the rounding; MLP sublayers only)"},
};
constexpr std::array kRecomputes{
    Named<Recompute>{Recompute::auto_, "auto",
                     "redraw weights in the backward when storing them would not fit (CUDA: or when "
                     "redrawing fits more samples; CPU: when they would take over an eighth of memory)"},
    Named<Recompute>{Recompute::yes, "true",
                     "always draw weights again in the backward instead of storing them"},
    Named<Recompute>{Recompute::no, "false", "store every weight for the backward"},
};
constexpr std::array kLogitScalings{
    Named<LogitScaling>{LogitScaling::sqrt, "sqrt",
                        "logits q.k / (sqrt(d_h) temperature) (Vaswani et al. 2017), d_h = width / heads"},
    Named<LogitScaling>{
        LogitScaling::mup, "mup",
        "logits q.k / (d_h temperature): muP's 1/d attention (Yang et al. 2021, Tensor Programs V)"},
};
constexpr std::array kAttentionGates{
    Named<AttentionGate>{AttentionGate::none, "none", "no gate: W_O reads the attention output as it is"},
    Named<AttentionGate>{
        AttentionGate::elementwise, "elementwise",
        "o[t,i] sigmoid((u W_g)[t,i]) before W_O, W_g d x d (Qiu et al. 2025, G1 elementwise)"},
    Named<AttentionGate>{AttentionGate::headwise, "headwise",
                         "o[t,i] sigmoid((u W_g)[t,h(i)]) before W_O, W_g d x heads: one gate per head"},
};
constexpr std::array kMoeGates{
    Named<MoeGate>{MoeGate::renormalized, "renormalized",
                   "the top-k softmax probabilities divided by their sum (Mixtral: "
                   "transformers modeling_mixtral.py MixtralSparseMoeBlock.forward)"},
    Named<MoeGate>{
        MoeGate::softmax, "softmax",
        "the top-k softmax probabilities as they are (OLMoE's norm_topk_prob = False; Switch, k = 1)"},
};
constexpr std::array kQkNormScopes{
    Named<QkNormScope>{QkNormScope::head, "head", "each head's slice of Q and K (width d/heads)"},
    Named<QkNormScope>{QkNormScope::projection, "projection",
                       "the whole projection (width d), before the heads are split: OLMo-2 (allenai/OLMo "
                       "olmo/model.py L432-441, L603-605; transformers Olmo2Attention's q_norm, k_norm)"},
};
constexpr std::array kBackendChoices{
    Named<BackendChoice>{BackendChoice::auto_, "auto",
                         "cuda when this build has it and a usable device exists, else cpu"},
    Named<BackendChoice>{BackendChoice::cpu, "cpu", "the CPU backend (all cores by default)"},
    Named<BackendChoice>{BackendChoice::cuda, "cuda", "the CUDA backend (refused without a usable device)"},
    Named<BackendChoice>{
        BackendChoice::reference, "reference",
        "the reference device: the CUDA backend's code on plain-loop references, on the host "
        "(slow; for checking)"},
};
}  // namespace

NORMSIM_VOCAB_TABLE(Placement, placement_names())
NORMSIM_VOCAB_TABLE(PlacementFamily, kPlacementFamilies)
NORMSIM_VOCAB_TABLE(Sublayer, kSublayers)
NORMSIM_VOCAB_TABLE(Activation, kActivations)
NORMSIM_VOCAB_TABLE(Norm, kNorms)
NORMSIM_VOCAB_TABLE(Loss, kLosses)
NORMSIM_VOCAB_TABLE(Init, kInits)
NORMSIM_VOCAB_TABLE(FinalNorm, kFinalNorms)
NORMSIM_VOCAB_TABLE(Update, kUpdates)
NORMSIM_VOCAB_TABLE(Batches, kBatches)
NORMSIM_VOCAB_TABLE(Precision, kPrecisions)
NORMSIM_VOCAB_TABLE(Recompute, kRecomputes)
NORMSIM_VOCAB_TABLE(BackendChoice, kBackendChoices)
NORMSIM_VOCAB_TABLE(LogitScaling, kLogitScalings)
NORMSIM_VOCAB_TABLE(AttentionGate, kAttentionGates)
NORMSIM_VOCAB_TABLE(MoeGate, kMoeGates)
NORMSIM_VOCAB_TABLE(QkNormScope, kQkNormScopes)
#undef NORMSIM_VOCAB_TABLE

}  // namespace normsim::vocab
