// Mean-field maps of one branch. MLP forward/backward: theory.md §1.1 extended to token pairs through the
// kernels kappa and dkappa; attention: theory.md §1.2 written for a general mixing matrix P
// (docs/theory_notes.md §attention). Cross terms between independent zero-mean weights are dropped.
#include "theory/branch_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace normsim::theory {

Branch Branch::mlp(Activation act, double sigma1_sq, double sigma2_sq, double sigma_gate_sq) {
  Branch b;
  b.kind_ = act == Activation::swiglu ? Kind::swiglu : Kind::mlp;
  b.act_ = act == Activation::swiglu ? Activation::silu : act;
  b.s1_ = sigma1_sq, b.s2_ = sigma2_sq, b.sg_ = sigma_gate_sq;
  return b;
}

Branch Branch::attention(double sigma_a_sq, AttentionMixing mix) {
  Branch b;
  b.kind_ = Kind::attention;
  b.sa_ = sigma_a_sq, b.mix_ = mix;
  return b;
}

Branch Branch::attention_value_norm(double sigma_o_sq, double gamma_sq, AttentionMixing mix,
                                    double sigma_v_sq, double eps) {
  Branch b;
  b.kind_ = Kind::attention_vnorm;
  b.sa_ = sigma_o_sq * gamma_sq, b.mix_ = mix;
  b.sv_ = sigma_v_sq, b.eps_ = eps;
  return b;
}

Branch Branch::cross_attention(double q_c) {
  Branch b;
  b.kind_ = Kind::cross;
  b.sa_ = q_c;
  return b;
}

Branch Branch::biased(double sigma_b_sq, double sigma_o_sq) const {
  if (sigma_b_sq != 0.0 && (kind_ == Kind::attention_vnorm || gate_))
    throw std::invalid_argument(
        "biases through the value norm or the output gate are not modelled (docs/theory_notes.md "
        "\"Biases\")");
  Branch b = *this;
  b.sb_ = sigma_b_sq, b.so_ = sigma_o_sq;
  return b;
}

double Branch::bias_out() const {
  return is_mlp() ? sb_ : so_ * sb_ + sb_;
}

Branch Branch::gated(std::optional<double> sigma_gate_sq) const {
  if (sigma_gate_sq && kind_ != Kind::attention && kind_ != Kind::attention_vnorm)
    throw std::invalid_argument("only a self-attention branch has an output gate");
  Branch b = *this;
  b.gate_ = sigma_gate_sq;
  return b;
}

namespace {

// The output gate (docs/theory_notes.md §"Attention output gate" [DERIVED]): the heads' output o (Gram
// out / sigma_O^2 per coordinate) and the gate z = u W_g (N(0, sigma_g^2 m) per token, token correlation rho)
// are independent at init (W_V, W_g independent), so the gated output's Gram is out's times the gate's
// (E s^2, E s_a s_b). Backward (gradient independence), two paths: through the value, the gradient at o is
// gated likewise before the value map (back * the gate's moments); through the gate, g_z = (g W_O^T) * o *
// s'(z), then g_z W_g^T: sigma_g^2 out (E s'^2, E s'_a s'_b) times the output gradient's Gram. The forward
// Jacobian (Tangent) has the same two paths with the value map's forward form.
GramMap gate_moments_map(double diag, double off) {
  return {diag, 0.0, 0.0, off};
}

}  // namespace

double Branch::pre_activation_cos(double weighted, double rho) const {
  if (sb_ == 0.0) return rho;  // no bias: rho itself, the bias-free recursion's bits
  const double s = weighted + sb_;
  return s > 0.0 ? (weighted * rho + sb_) / s : 0.0;
}

const GaussianKernel& Branch::kernel(double s) const {
  for (const auto& k : cache_) {
    if (k.variance() == s) return k;
  }
  // Placements without a norm in front of the branch change s every layer: a small ring of recent scales.
  constexpr std::size_t kSlots = 8;
  if (cache_.size() < kSlots) return cache_.emplace_back(act_, s);
  GaussianKernel& slot = cache_[next_slot_];
  next_slot_ = (next_slot_ + 1) % kSlots;
  slot = GaussianKernel(act_, s);
  return slot;
}

const RoutingMoments& Branch::gate_moments_at(double s_sq, double rho) const {
  for (const auto& c : gate_cache_)
    if (c.s_sq == s_sq && c.rho == rho) return c.m;
  constexpr std::size_t kSlots = 64;
  if (gate_cache_.size() == kSlots) gate_cache_.erase(gate_cache_.begin());
  return gate_cache_.emplace_back(GateCache{s_sq, rho, gate_moments(routing_, s_sq, rho)}).m;
}

Branch::Eval Branch::evaluate(TokenGram in) const {
  if (routing_.experts > 0 && is_mlp()) return evaluate_routed(in);
  // rho = in.cos(), without the division when in.diag is exactly 1 (a normalized input at gamma = 1): x / 1
  // is exact, and the division sits on the recursion's latency-bound critical path.
  // A second moment is never negative: a negative diagonal is the rounding of a difference that cancels
  // (x - x), and is 0; a NaN stays NaN.
  const double m = in.diag < 0.0 ? 0.0 : in.diag, rho = m == 1.0 ? in.off : in.cos();
  Eval e;
  if (!std::isfinite(m * std::max({s1_, sg_, 1.0}))) {  // an overflowed stream: nothing to predict
    const double nan = std::numeric_limits<double>::quiet_NaN();
    e.out = e.factors.hidden = {nan, nan};
    e.back = GramMap::scale(nan);
    return e;
  }
  switch (kind_) {
    case Kind::cross:
      e.out = {sa_ + bias_out(), sa_ + bias_out()};
      e.back = GramMap::scale(0.0);
      return e;
    case Kind::mlp: {
      // q = s2 M2(s1 m), chi = s1 s2 D2(s1 m) (theory.md §1.1); token pairs through kappa, dkappa. With
      // biases the pre-activations have second moment s = s1 m + sb and correlation c = (s1 m rho + sb) / s.
      // ReLU and linear: M2, D2 are closed forms of s and the kernels do not depend on s, so no kernel
      // object is built or looked up (the same numbers GaussianKernel gives).
      const double s = s1_ * m + sb_, c = pre_activation_cos(s1_ * m, rho);
      double m2 = 0.0, d2 = 0.0;
      GaussianKernel::Pair kk{};
      if (act_ == Activation::relu || act_ == Activation::linear) {
        if (!(s >= 0.0) || !std::isfinite(s))
          throw std::invalid_argument("gaussian moments: variance must be >= 0");
        if (act_ == Activation::relu) {
          m2 = s / 2, d2 = 0.5, kk = relu_kappas(c);
        } else {
          m2 = s, d2 = 1.0, kk = {std::clamp(c, -1.0, 1.0), 1.0};
        }
      } else {
        const auto& k = kernel(s);
        m2 = k.m2(), d2 = k.d2(), kk = k.kappas(c);
      }
      const double chi = s1_ * s2_ * d2;
      e.factors.hidden = {m2, m2 * kk.kappa};
      e.out = s2_ * e.factors.hidden + TokenGram{bias_out(), bias_out()};
      e.back = {chi, 0.0, 0.0, chi * kk.dkappa};
      e.factors.w1_factor = {s2_ * d2, s2_ * d2 * kk.dkappa};
      return e;
    }
    case Kind::swiglu: {
      // h = silu(a) * b, a ~ N(0, sg m + sb), b ~ N(0, s1 m + sb) independent: E[h h'] = E[silu silu'] E[b
      // b'].
      const auto& k = kernel(sg_ * m + sb_);
      const auto kk = k.kappas(pre_activation_cos(sg_ * m, rho));
      const double up = s1_ * m + sb_, up_off = s1_ * m * rho + sb_;
      e.factors.hidden = {k.m2() * up, k.m2() * kk.kappa * up_off};
      e.out = s2_ * e.factors.hidden + TokenGram{bias_out(), bias_out()};
      e.back = {s2_ * (sg_ * up * k.d2() + s1_ * k.m2()), 0.0, 0.0,
                s2_ * (sg_ * up_off * k.d2() * kk.dkappa + s1_ * k.m2() * kk.kappa)};
      e.factors.w1_factor = {s2_ * k.m2(), s2_ * k.m2() * kk.kappa};
      e.factors.wgate_factor = {s2_ * k.d2() * up, s2_ * k.d2() * kk.dkappa * up_off};
      return e;
    }
    case Kind::attention:
    case Kind::attention_vnorm: {
      // Output Gram sigma^2 [(1 - rho) P P^T + rho 11^T] m (rows of P sum to 1); the value norm sets m = 1
      // forward and divides the backward map by m. Backward g_u = P^T g W^T:
      // Gram sigma^2 [(G - G_off) P^T P + G_off s s^T].
      // With eps the value norm's input s^2 = sigma_V^2 m gives s^2 / (s^2 + eps) forward and
      // sigma_V^2 / (s^2 + eps) backward.
      const bool vnorm = kind_ == Kind::attention_vnorm;
      double scale = vnorm ? sa_ : sa_ * m, back = vnorm ? sa_ / m : sa_;
      if (vnorm && eps_ != 0.0) {
        const double s2 = sv_ * m;
        scale = sa_ * s2 / (s2 + eps_), back = sa_ * sv_ / (s2 + eps_);
      }
      e.out = {scale * ((1.0 - rho) * mix_.fwd_diag + rho) + bias_out(),
               scale * ((1.0 - rho) * mix_.fwd_off + rho) + bias_out()};
      e.back = {back * mix_.back_diag, back * (mix_.col_diag - mix_.back_diag), back * mix_.back_off,
                back * (mix_.col_off - mix_.back_off)};
      if (gate_) {
        const GateMoments g = sigmoid_gate_moments(*gate_ * m, rho);
        const TokenGram o = e.out;  // sigma_O^2 times the heads' output Gram
        e.out = {o.diag * g.s2, o.off * g.s11};
        e.back = e.back * gate_moments_map(g.s2, g.s11) +
                 gate_moments_map(*gate_ * o.diag * g.d2, *gate_ * o.off * g.d11);
      }
      return e;
    }
  }
  return e;
}

// A routed MLP (theory/routing.hpp, docs/theory_notes.md "Routed MLP backward" [DERIVED]): with the dense
// MLP's output Gram Q and backward map B, and the router logits' moments at variance sigma_r^2 m and the
// tokens' cosine: forward Q times the gate moments (G_diag, G_off); backward the experts' path, B with the
// gates' moments (gate_moments_map(G) * B), plus the router's path r = W_r J^T dg, dg_e = <dout, MLP_e(u)>,
// whose Gram is sigma_r^2 Q (router_diag, router_off) times the output gradient's (cross terms between the
// paths and between experts are O(1/d)). The weight gradients are the dense ones with each token's output
// gradient scaled by its gate: every factor times G; the router's, sum_t u_t^T dz_t, from dz's Gram.
Branch::Eval Branch::evaluate_routed(TokenGram in) const {
  Branch dense = *this;
  dense.routing_ = RoutedMlp{};
  Eval e = dense.evaluate(in);
  const double m = in.diag < 0.0 ? 0.0 : in.diag, rho = m == 0.0 ? 1.0 : in.cos();
  const RoutingMoments& g = gate_moments_at(routing_.router_sigma_sq * m, rho);
  const TokenGram q = e.out;
  const GramMap gated = gate_moments_map(g.diag, g.off);
  e.out = {q.diag * g.diag, q.off * g.off};
  e.back = gated * e.back;
  e.factors.router = {q.diag * g.router_diag, q.off * g.router_off};
  if (routing_.router_path) {
    const double sr = routing_.router_sigma_sq;
    e.back = e.back + gate_moments_map(sr * e.factors.router.diag, sr * e.factors.router.off);
  }
  for (TokenGram* f : {&e.factors.hidden, &e.factors.w1_factor, &e.factors.wgate_factor})
    *f = {f->diag * g.diag, f->off * g.off};
  return e;
}

Branch::Tangent Branch::tangent(TokenGram in, const Eval& e) const {
  Tangent t;
  switch (kind_) {
    case Kind::cross:
      // W_V's and W_O's moves give the encoder part X twice, b_V's and W_O's (through the value bias)
      // sigma_o^2 sigma_b^2 each, b_O's sigma_b^2: 2 out - sigma_b^2.
      t.map = GramMap::scale(0.0);
      t.moved = 2.0 * e.out;
      if (sb_ != 0.0) t.moved = t.moved + TokenGram{-sb_, -sb_};
      return t;
    case Kind::mlp:
    case Kind::swiglu:
      t.map = e.back;  // E[phi'(h_t) phi'(h_s)] (W1 and Wgate paths) in either direction
      // A bias moved by the same relative step as its matrix (sim/cpu/weight_update.hpp) adds sb to the moved
      // pre-activations' Gram, which the W1 and Wgate factors carry to the output (e.out has the output
      // bias's sb already).
      t.moved = t.map(in) + e.out;
      if (sb_ != 0.0) t.moved = t.moved + sb_ * e.factors.w1_factor;
      if (sb_ != 0.0 && kind_ == Kind::swiglu) t.moved = t.moved + sb_ * e.factors.wgate_factor;
      return t;
    case Kind::attention:
    case Kind::attention_vnorm: {
      // P du W_V W_O: Gram sigma^2 [(D - O) P P^T + O 11^T] for a perturbation Gram (D, O). The value norm
      // scales du W_V by gamma / sqrt(s^2 + eps) with s^2 = sigma_V^2 m (its radial part, O(1/d_head), is
      // dropped): the backward map's scalar.
      const double m = in.diag;
      const double g = kind_ == Kind::attention ? sa_ : eps_ != 0.0 ? sa_ * sv_ / (sv_ * m + eps_) : sa_ / m;
      t.map = {g * mix_.fwd_diag, g * (1.0 - mix_.fwd_diag), g * mix_.fwd_off, g * (1.0 - mix_.fwd_off)};
      if (gate_) {  // the gated output's two paths, as evaluate()'s backward (e.out is already gated)
        const GateMoments gm = sigmoid_gate_moments(*gate_ * m, in.cos());
        const TokenGram o = {e.out.diag / gm.s2, gm.s11 > 0.0 ? e.out.off / gm.s11 : 0.0};
        t.map = gate_moments_map(gm.s2, gm.s11) * t.map +
                gate_moments_map(*gate_ * o.diag * gm.d2, *gate_ * o.off * gm.d11);
      }
      break;
    }
  }
  t.moved = t.map(in) + e.out;
  // The value bias's move passes P and W_O: sigma_o^2 sigma_b^2 (W_O's and b_O's moves are in e.out).
  if (sb_ != 0.0) t.moved = t.moved + TokenGram{so_ * sb_, so_ * sb_};
  return t;
}

}  // namespace normsim::theory
