// One residual branch as the mean field sees it: the token Gram of its raw output given the token Gram
// of its input, the linear map that takes the gradient Gram at its output to the one at its input, and
// (MLP branches) the weight-gradient norms. Shapes follow docs/conventions.md "Branches".
#pragma once
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <vector>

#include "theory/activation.hpp"
#include "theory/attention_gate.hpp"
#include "theory/attention_mixing.hpp"
#include "theory/gaussian_moments.hpp"
#include "theory/routing.hpp"
#include "theory/token_gram.hpp"

namespace normsim::theory {

// Frobenius norms of dLoss/dW summed over T tokens; wgate only for swiglu, wrouter only for a routed MLP.
struct MlpWeightGrads {
  double w1 = 0.0, w2 = 0.0;
  std::optional<double> wgate, wrouter;
};

struct MlpDims {
  int width = 0;   // d
  int hidden = 0;  // d_ff
  int tokens = 1;  // T
};

class Branch {
 public:
  enum class Kind { mlp, swiglu, attention, attention_vnorm, cross };

  // F(u) = phi(u W1) W2, or SwiGLU (silu(u Wg) * (u W1)) W2 when act == swiglu.
  static Branch mlp(Activation act, double sigma1_sq, double sigma2_sq, double sigma_gate_sq);
  // Uniform attention value path F(u) = P u W_V W_O, sigma_a_sq = sigma_V^2 sigma_O^2 (theory.md §1.2).
  static Branch attention(double sigma_a_sq, AttentionMixing mix);
  // HybridNorm's attention: V = RMSNorm_head(u W_V) * gamma, so the output scale ignores u's scale
  // [DERIVED, theory.md §2.7] as eps -> 0. With the norm's eps, V's input second moment s^2 = sigma_V^2 m
  // enters through s^2 / (s^2 + eps) forward and sigma_V^2 / (s^2 + eps) backward (docs/theory_notes.md
  // §eps); eps == 0 ignores sigma_v_sq and gives the eps -> 0 maps bit for bit.
  static Branch attention_value_norm(double sigma_o_sq, double gamma_sq, AttentionMixing mix,
                                     double sigma_v_sq = 1.0, double eps = 0.0);

  // The decoder's cross-attention (theory/cross_attention.hpp): a constant output of Gram diag = off = q_c,
  // whatever the input; no gradient reaches the input.
  static Branch cross_attention(double q_c);
  // This attention branch (attention or attention_value_norm) with its output gated before W_O by
  // sigmoid(u W_g), sigma_g^2 = fan_in Var(W_g) (attention_gate; elementwise and headwise have the same
  // mean field: docs/theory_notes.md §"Attention output gate" [DERIVED]); nullopt: no gate.
  Branch gated(std::optional<double> sigma_gate_sq) const;
  // This branch with a bias of variance sigma_b_sq on each of its matrices (docs/theory_notes.md "Biases").
  // MLP (w1, wgate, w2): every pre-activation's second moment and every token pair's covariance gain
  // sigma_b^2, and so does the output's Gram (Poole et al. 2016 eq. 3, Schoenholz et al. 2017 eq. 3: q =
  // sigma_w^2 E phi^2 + sigma_b^2). Uniform attention and cross-attention: the value bias passes P (its rows
  // sum to 1) and W_O (gain sigma_o_sq), so the output Gram gains sigma_o^2 sigma_b^2 + sigma_b^2. The
  // backward maps are the bias-free ones (at the shifted moments): a bias carries no gradient to u. Not
  // derived, and refused: the value norm's and the output gate's share.
  Branch biased(double sigma_b_sq, double sigma_o_sq = 1.0) const;
  // This MLP as a routed MLP of r.experts experts (theory/routing.hpp): its output Gram times the gate
  // moments; backward the experts' path times them plus the router's path (evaluate_routed). No tangent:
  // theory/stack_spec.cpp refuses a random update of it.
  Branch routed(const RoutedMlp& r) const {
    Branch b = *this;
    b.routing_ = r;
    return b;
  }
  Kind kind() const { return kind_; }
  bool is_mlp() const { return kind_ == Kind::mlp || kind_ == Kind::swiglu; }

  // MLP only: per-coordinate Gram of W2's input, and the factors that turn the output gradient Gram
  // into the Gram of the backpropagated signal at W1's (and Wg's) output, summed over the hidden units
  // and divided by d. All the weight gradients need from the forward pass besides the branch input.
  // Routed MLP: `router` turns the output gradient Gram into the Gram of the router logits' gradient dz,
  // per expert-coordinate and divided by d (sigma_r^2 times it is the router's path; evaluate_routed).
  struct Factors {
    TokenGram hidden;
    TokenGram w1_factor, wgate_factor;
    TokenGram router;
  };
  // Everything the mean field needs from the branch at one input, from one kernel evaluation.
  struct Eval {
    TokenGram out;  // Gram of F(u) (out.diag = branch_sq)
    GramMap back;   // gradient Gram at the output -> gradient Gram at the input u
    Factors factors;
  };
  Eval evaluate(TokenGram in) const;

  // First-order response of the branch output to small changes, for the metric output_change under a
  // random update (docs/theory_notes.md "Output change under a random update"). `map` takes the Gram of a
  // perturbation of the input u (uncorrelated with u and with the branch's weights) to the Gram of the
  // output's change: the forward Jacobian's Gram map (for per-token maps the same as the backward map
  // `back`; for attention the forward mixing P, not P^T). `moved` is the Gram of the output's change, per
  // unit s^2, when every matrix of the branch moves by an independent Gaussian dW with
  // ||dW||_F = s ||W||_F: moving the first matrix (W1 and Wgate, or W_V) by s perturbs its input like
  // s u would, so gives map(in); moving the last (W2, W_O) gives the output's own Gram out. Cross-attention
  // has map = 0, and its value matrix acts on the fixed encoder output: out again. Query and key matrices
  // move only the softmax, which the uniform-attention model leaves out.
  struct Tangent {
    GramMap map;
    TokenGram moved;
  };
  Tangent tangent(TokenGram in, const Eval& e) const;

  // Weight-gradient norms given the gradient Gram at the branch output; nullopt for attention.
  // E||sum_t a_t^T g_t||_F^2 = sum_{t,s} (a_t.a_s)(g_t.g_s) with activations and gradients independent
  // (gradient-independence assumption); the square root of that expectation, which concentrates at
  // large d [DERIVED, docs/theory_notes.md §gradw]. Inline: the mean field calls it once per sublayer.
  std::optional<MlpWeightGrads> weight_grads(TokenGram in, const Factors& f, TokenGram grad_out,
                                             MlpDims dims) const {
    if (!is_mlp()) return std::nullopt;
    const double d = dims.width, h = dims.hidden, t = dims.tokens, pairs = t * (t - 1.0);
    // sum over token pairs of (x_t . x_s)(y_t . y_s), from per-coordinate Grams of x (nx coordinates) and
    // y (ny coordinates).
    auto frob = [&](double nx, TokenGram x, double ny, TokenGram y) {
      return std::sqrt(std::max(0.0, t * nx * x.diag * ny * y.diag + pairs * nx * x.off * ny * y.off));
    };
    auto times = [](TokenGram a, TokenGram b) { return TokenGram{a.diag * b.diag, a.off * b.off}; };
    MlpWeightGrads out;
    out.w2 = frob(h, f.hidden, d, grad_out);
    out.w1 = frob(d, in, d, times(f.w1_factor, grad_out));
    if (kind_ == Kind::swiglu) out.wgate = frob(d, in, d, times(f.wgate_factor, grad_out));
    if (routing_.experts > 0) out.wrouter = frob(d, in, d, times(f.router, grad_out));  // sum_t u_t^T dz_t
    return out;
  }

 private:
  const GaussianKernel& kernel(double s) const;
  // The output Gram's share of the biases: sigma_b^2 (MLP: W2's), sigma_o^2 sigma_b^2 + sigma_b^2 (attention:
  // W_V's through W_O, and W_O's).
  double bias_out() const;
  // The token correlation of pre-activations whose weighted part has second moment `weighted` and cosine
  // rho, once the bias's sb_ is added to both moments.
  double pre_activation_cos(double weighted, double rho) const;

  Kind kind_ = Kind::mlp;
  Activation act_ = Activation::relu;
  double s1_ = 1.0, s2_ = 1.0, sg_ = 1.0;  // w1, w2, wgate gains^2
  double sa_ = 1.0;                        // attention output gain^2 (sigma_A^2, or sigma_O^2 gamma^2)
  double sv_ = 1.0, eps_ = 0.0;            // value norm only: sigma_V^2 and the norm's eps
  double sb_ = 0.0;                        // every matrix's bias variance sigma_b^2 (biased())
  double so_ = 1.0;                        // attention's W_O gain^2, which the value bias passes (biased())
  std::optional<double> gate_;             // attention only: the output gate's sigma_g^2
  AttentionMixing mix_;
  RoutedMlp routing_;  // experts == 0: a dense MLP
  struct GateCache {
    double s_sq, rho;
    RoutingMoments m;
  };
  mutable std::vector<GateCache> gate_cache_;  // recent (s^2, rho): a Monte Carlo rule is costly
  const RoutingMoments& gate_moments_at(double s_sq, double rho) const;
  Eval evaluate_routed(TokenGram in) const;
  mutable std::vector<GaussianKernel> cache_;  // a few recent input scales; most placements need one
  mutable std::size_t next_slot_ = 0;
};

}  // namespace normsim::theory
