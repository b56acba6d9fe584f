#include "sim/cpu_branches.hpp"

#include <cmath>
#include <initializer_list>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>

#include "sim/activations_vec.hpp"
#include "sim/attention_gate.hpp"
#include "sim/bf16.hpp"
#include "sim/cpu_heads.hpp"
#include "sim/cpu_moe.hpp"
#include "sim/drawn_product.hpp"
#include "sim/draws.hpp"
#include "sim/encoder_output.hpp"
#include "sim/head_norms.hpp"
#include "sim/init.hpp"
#include "sim/norm_site.hpp"
#include "sim/softmax.hpp"
#include "sim/unit_norm.hpp"

namespace normsim::sim {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Draws and redraws the weight matrices of sublayer k of one sample into a workspace (W + dW when the hooks
// apply a parameter update), or draws each once per pass where the workspace keeps them, and hands the loss's
// weight gradients to an update that records them. Holds the shape and placement by reference: the graph that
// owns the branch owns them too.
template <class R>
struct WeightSource {
  const StackShape& s;
  const Placement& p;
  int k;
  SampleKey key;
  UpdateHooks<R> hooks;
  std::uint32_t index = 0;  // the expert of a routed MLP (WeightId's index); 0 for every other branch

  const Mat<R>& draw(WeightKind w, CpuWorkspace<R>& ws) const {
    if (!ws.keep_weights) return draw_into(ws.weight, w, ws.threads);
    const auto [m, to_draw] = kept(w, ws);
    if (to_draw) draw_into(*m, w, ws.threads);
    return *m;
  }
  // Whether the products run in bf16 (sim/bf16.hpp): u and W rounded, the output (bias added) rounded.
  bool bf16() const { return s.cfg.precision == vocab::Precision::bf16; }
  // out = u W (+ 1 b^T where w has a bias) for the forward, then after(first, count) on each finished
  // block of columns. In bf16 u is read rounded and the bias is added before the output's one rounding, as
  // addmm's epilogue does.
  template <class After>
  void multiply(Mat<R>& out, const Mat<R>& u, WeightKind w, CpuWorkspace<R>& ws, After after) const {
    Mat<R> rounded;
    const Mat<R>& x = bf16_operand(bf16(), u, rounded);
    Mat<R> b;
    if (has_bias(s.cfg, w)) draw_bias(b, w);
    multiply_unbiased(out, x, w, ws, [&](Eigen::Index f, Eigen::Index c) {
      if (b.size()) out.middleCols(f, c).rowwise() += b.row(0).segment(f, c);
      round_to_bf16_if<R>(bf16(), out.middleCols(f, c));
      after(f, c);
    });
    if (hooks.probe) hooks.probe->input(k, w, x);  // after the product has drawn (and stepped) W
  }
  void multiply(Mat<R>& out, const Mat<R>& u, WeightKind w, CpuWorkspace<R>& ws) const {
    multiply(out, u, w, ws, [](Eigen::Index, Eigen::Index) {});
  }
  // Matrix w's bias b (1 x fan_out), b + dB when the hooks apply an update.
  void draw_bias(Mat<R>& b, WeightKind w) const {
    const DrawKey bias_key{key.seed, key.sample, std::uint32_t(k),
                           param_stream(WeightId{w, index}, Part::bias)};
    draw_matrix(b, 1, s.fan_out(w), bias_key, bias_std(s.cfg), 1);
    if (hooks.apply) hooks.apply->apply(k, w, b, Part::bias);
    round_to_bf16_if<R>(bf16(), b);
  }
  // out = u W, W as draw() gives it (and kept as draw() keeps it). In float32 with thin_gemm W is drawn strip
  // by strip as the product reads it (drawn_product.hpp: the same bits), unless this pass already drew it or
  // an update hook or a unit-norm rule (which reads whole columns) changes it after the draw.
  template <class After>
  void multiply_unbiased(Mat<R>& out, const Mat<R>& u, WeightKind w, CpuWorkspace<R>& ws, After after) const {
    // A compile-time test first: without AVX-512 the drawn product is not built at all.
    if constexpr (std::is_same_v<R, float> && has_thin_gemm) {
      if (drawn_product_fits(s.fan_out(w)) && !hooks.apply && !unit_norm(s, p, k, w) && !bf16()) {
        Mat<R>* keep = nullptr;
        if (ws.keep_weights) {
          const auto [m, to_draw] = kept(w, ws);
          if (!to_draw) return product_by_columns(out, u, *m, false, ws.threads, after);
          keep = m;
        }
        return drawn_product(out, u, draw_key(w), weight_std(s, p, k, w), s.fan_out(w), keep, ws.threads,
                             after);
      }
    }
    product_by_columns(out, u, draw(w, ws), false, ws.threads, after);
  }
  const Mat<R>& draw_into(Mat<R>& m, WeightKind w, int threads) const {
    draw_matrix(m, s.fan_in(w), s.fan_out(w), draw_key(w), weight_std(s, p, k, w), threads);
    if (const std::optional<UnitNorm> unit = unit_norm(s, p, k, w))
      normalize_weight(m.data(), int(m.rows()), int(m.cols()), *unit);
    if (hooks.apply) hooks.apply_weight(k, w, m);
    round_to_bf16_if<R>(bf16(), m);  // the float32 master weight, cast at its use
    return m;
  }
  DrawKey draw_key(WeightKind w) const {
    return {key.seed, key.sample, std::uint32_t(k), weight_stream(WeightId{w, index})};
  }
  // With keep_weights: matrix w's kept buffer (the workspace grown to hold it), and whether this pass has
  // yet to draw it, which the caller then does (the slot counts as drawn by this pass from here on).
  std::pair<Mat<R>*, bool> kept(WeightKind w, CpuWorkspace<R>& ws) const {
    const std::size_t slot =
        (std::size_t(index) * std::size_t(s.depth) + std::size_t(k)) * kWeightKinds + std::size_t(w);
    if (ws.kept.size() <= slot) {
      ws.kept.resize(slot + 1);
      ws.kept_pass.resize(slot + 1, 0);
    }
    const bool to_draw = ws.kept_pass[slot] != ws.pass;
    ws.kept_pass[slot] = ws.pass;
    return {&ws.kept[slot], to_draw};
  }
  // dLoss/dW = A^T B of matrix w (A the matrix's input, B the gradient of its output), and dLoss/db = 1^T B
  // of its bias, when recorded.
  void record(WeightKind w, const Mat<R>& A, const Mat<R>& B) const {
    if (!hooks.record || !hooks.record->needs_gradients()) return;
    hooks.record->set_product_gradient(k, w, A, B);
    if (has_bias(s.cfg, w)) hooks.record->set_gradient(k, w, B.colwise().sum(), Part::bias);
  }
};

// Weight-gradient norms ||A^T B||_F of independent pairs, computed concurrently: each is one
// frobenius_of_AtB whichever thread runs it.
template <class R>
void gradient_norms(std::initializer_list<std::tuple<double*, const Mat<R>*, const Mat<R>*>> jobs,
                    int threads) {
  const std::vector<std::tuple<double*, const Mat<R>*, const Mat<R>*>> v(jobs);
  double work = 0;  // the Grams of A and B: 2 T^2 (a + b) for T rows
  for (const auto& [out, a, b] : v)
    work += 2.0 * double(a->rows()) * double(a->rows()) * double(a->cols() + b->cols());
  for_each_run(v.size(), work, threads, [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i)
      *std::get<0>(v[i]) = frobenius_of_AtB<R>(*std::get<1>(v[i]), *std::get<2>(v[i]));
  });
}

template <class R>
class CpuMlp final : public CpuBranch<R> {
 public:
  CpuMlp(const StackShape& s, const Placement& p, int k, SampleKey key, UpdateHooks<R> hooks,
         std::uint32_t expert = 0)
      : w_{s, p, k, key, hooks, expert} {}

  Mat<R> forward(const Mat<R>& u, CpuWorkspace<R>& ws) override {
    if (w_.s.swiglu) w_.multiply(g_, u, WeightKind::wgate, ws);
    Mat<R> a(u.rows(), w_.s.hidden), out;
    if (keeps_gate<R>(w_.s.act)) gate_.resize(u.rows(), w_.s.hidden);
    w_.multiply(h_, u, WeightKind::w1, ws,
                [&](Eigen::Index f, Eigen::Index c) { activate_columns(a, f, c, true); });
    w_.multiply(out, a, WeightKind::w2, ws);
    return out;
  }

  // In bf16 (sim/bf16.hpp) the gradients a product returns, and those the activation's backward makes of
  // them, are rounded as the forward's values were; u and dout are read rounded, as the forward's products
  // and the bf16 output's gradient are; du sums its two products' rounded gradients in float32 (each
  // linear casts u on its own, and the casts' backward accumulates in u's float32).
  Mat<R> backward(const Mat<R>& u_in, const Mat<R>& dout_in, CpuWorkspace<R>& ws,
                  WeightGradNorms& norms) override {
    norms.fill(kNaN);
    const int n = ws.threads;
    const bool bf16 = w_.bf16();
    Mat<R> u_rounded, dout_rounded;
    const Mat<R>& u = bf16_operand(bf16, u_in, u_rounded);
    const Mat<R>& dout = bf16_operand(bf16, dout_in, dout_rounded);
    Mat<R> a(h_.rows(), h_.cols()), dh, dg, du;    // a: the activations, recomputed from h (the same bits)
    const double work = 32.0 * double(h_.size());  // erf/exp per entry: tens of operations
    for_column_blocks(h_.cols(), work, n,
                      [&](Eigen::Index f, Eigen::Index c) { activate_columns(a, f, c, false); });
    if (w_.s.swiglu) dg.resize(h_.rows(), h_.cols());
    // da = dout W2^T, then turned into dh (and dg) block by block.
    product_by_columns(dh, dout, w_.draw(WeightKind::w2, ws).transpose(), false, n,
                       [&](Eigen::Index f, Eigen::Index c) {
                         auto da = dh.middleCols(f, c);
                         round_to_bf16_if<R>(bf16, da);
                         if (w_.s.swiglu) {
                           // a = silu(g) * h:  dg = da * h * silu'(g),  dh = da * silu(g)
                           dg.middleCols(f, c) = da.cwiseProduct(h_.middleCols(f, c));
                           round_to_bf16_if<R>(bf16, dg.middleCols(f, c));
                           multiply_by_act_derivative(dg.middleCols(f, c), f, c);
                           round_to_bf16_if<R>(bf16, dg.middleCols(f, c));
                           multiply_by_act(da, f, c);
                         } else {
                           multiply_by_act_derivative(da, f, c);
                         }
                         round_to_bf16_if<R>(bf16, da);
                       });
    double* nw = norms.data();
    w_.record(WeightKind::w2, a, dout);
    w_.record(WeightKind::w1, u, dh);
    if (w_.s.swiglu) {
      gradient_norms<R>({{nw + int(WeightKind::w2), &a, &dout},
                         {nw + int(WeightKind::wgate), &u, &dg},
                         {nw + int(WeightKind::w1), &u, &dh}},
                        n);
      w_.record(WeightKind::wgate, u, dg);
      product_by_columns(du, dg, w_.draw(WeightKind::wgate, ws).transpose(), false, n);
      if (bf16) {
        Mat<R> du1;
        product_by_columns(du1, dh, w_.draw(WeightKind::w1, ws).transpose(), false, n);
        round_to_bf16_if<R>(true, du);
        round_to_bf16_if<R>(true, du1);
        du += du1;
      } else {
        product_by_columns(du, dh, w_.draw(WeightKind::w1, ws).transpose(), true, n);
      }
    } else {
      gradient_norms<R>({{nw + int(WeightKind::w2), &a, &dout}, {nw + int(WeightKind::w1), &u, &dh}}, n);
      product_by_columns(du, dh, w_.draw(WeightKind::w1, ws).transpose(), false, n);
      round_to_bf16_if<R>(bf16, du);
    }
    return du;
  }

 private:
  // The activation's input: h, or g for SwiGLU (whose activations are silu(g) * h).
  const Mat<R>& act_input() const { return w_.s.swiglu ? g_ : h_; }
  // The kept gate's row t from column f, null where the activation keeps none (keeps_gate).
  R* gate_row(Eigen::Index t, Eigen::Index f) { return gate_.size() ? &gate_(t, f) : nullptr; }

  // Columns [f, f + c) of the activations a: act(h), or silu(g) * h for SwiGLU. The forward (keep) computes
  // them and keeps the vectorised activations' gate; the backward rebuilds them from that gate (the same
  // bits) or from h.
  void activate_columns(Mat<R>& a, Eigen::Index f, Eigen::Index c, bool keep) {
    const Mat<R>& z = act_input();
    const Activation act = w_.s.act;
    bool done = false;
    if constexpr (std::is_same_v<R, float>) {
      if ((done = vectorised<R>(act)))
        for (Eigen::Index t = 0; t < z.rows(); ++t) {
          if (keep || !keeps_gate<R>(act))
            activate_row(act, &z(t, f), keep ? gate_row(t, f) : nullptr, &a(t, f), c);
          else
            activate_row_from_gate(act, &z(t, f), gate_row(t, f), &a(t, f), c);
        }
    }
    if (!done) activate_block(act, z.middleCols(f, c), a.middleCols(f, c));
    // bf16: act(z) is an op on a bf16 product (rounded), and so is SwiGLU's product with h.
    round_to_bf16_if<R>(w_.bf16(), a.middleCols(f, c));
    if (w_.s.swiglu) a.middleCols(f, c) = a.middleCols(f, c).cwiseProduct(h_.middleCols(f, c));
    if (w_.s.swiglu) round_to_bf16_if<R>(w_.bf16(), a.middleCols(f, c));
  }

  // d *= act'(z) on columns [f, f + c) of the activation's input z (d is that block of a T x H matrix).
  template <class Block>
  void multiply_by_act_derivative(Block&& d, Eigen::Index f, Eigen::Index c) {
    const Mat<R>& z = act_input();
    if constexpr (std::is_same_v<R, float>) {
      if (vectorised<R>(w_.s.act)) {
        for (Eigen::Index t = 0; t < z.rows(); ++t)
          multiply_row_by_derivative(w_.s.act, &z(t, f), gate_row(t, f), &d(t, 0), c);
        return;
      }
    }
    multiply_by_derivative(w_.s.act, z.middleCols(f, c), d);
  }
  // d *= act(z) on columns [f, f + c) (SwiGLU's dh = da * silu(g)).
  template <class Block>
  void multiply_by_act(Block&& d, Eigen::Index f, Eigen::Index c) {
    const Mat<R>& z = act_input();
    Mat<R> y(d.rows(), c);
    bool done = false;
    if constexpr (std::is_same_v<R, float>) {
      if ((done = keeps_gate<R>(w_.s.act)))
        for (Eigen::Index t = 0; t < z.rows(); ++t)
          activate_row_from_gate(w_.s.act, &z(t, f), gate_row(t, f), &y(t, 0), c);
    }
    if (!done) activate_block(w_.s.act, z.middleCols(f, c), y);
    round_to_bf16_if<R>(w_.bf16(), y);  // silu(g) as the forward stored it
    d = d.cwiseProduct(y);
  }

  WeightSource<R> w_;
  Mat<R> h_, g_;  // pre-activations u W1 (T x H) and, for SwiGLU, u Wgate
  Mat<R> gate_;   // the kept gate of the activation's input (keeps_gate: GELU's Phi, SiLU's sigmoid(-|z|))
};

// The decoder's encoder output E (T x d) of one sample (sim/encoder_output.hpp).
template <class R>
Mat<R> encoder_matrix(const StackShape& s, SampleKey key) {
  const int T = s.tokens, d = s.width;
  Mat<R> e(T, d), E(T, d);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < d; ++i) e(t, i) = R(encoder_entry(key.seed, key.sample, t, i, d, s.cfg.encoder_cos));
  if (vocab::is_pointwise(s.norm)) {  // the encoder's final norm (sim/norm_site.hpp)
    const NormAt at = final_norm_at(s);
    const PointwiseNorm f{s.norm, s.cfg.norm_gain, at.alpha, at.shift};
    return e.unaryExpr([&](R v) { return R(f(double(v))); });
  }
  for (int t = 0; t < T; ++t)
    row_norm_forward(s.norm, e.data() + std::size_t(t) * d, E.data() + std::size_t(t) * d, d, s.cfg.norm_gain,
                     s.cfg.norm_eps);
  return E;
}

// Self-attention (K, V from the branch input u), or the decoder's cross-attention (K, V from the fixed
// encoder output E, no mask; only Q depends on u, so dLoss/du flows through Q alone).
template <class R>
class CpuAttention final : public CpuBranch<R> {
 public:
  CpuAttention(const StackShape& s, const Placement& p, int k, SampleKey key, bool qkv_norm,
               UpdateHooks<R> hooks)
      : w_{s, p, k, key, hooks},
        heads_(s.heads),
        cross_(s.branch(k) == BranchKind::cross_attention),
        causal_(s.cfg.causal && !cross_),
        norms_(head_norms(s.cfg, qkv_norm)),
        eps_(s.cfg.norm_eps),
        gain_(s.cfg.norm_gain),
        logit_scale_(logit_scale(s.cfg, s.width / s.heads)),
        group_(cross_ ? 0 : gate_group(s.gate, s.width, s.heads)),
        kinds_{cross_ ? std::array{WeightKind::cq, WeightKind::ck, WeightKind::cv, WeightKind::co}
                      : std::array{WeightKind::wq, WeightKind::wk, WeightKind::wv, WeightKind::wo}} {
    if (cross_) enc_ = encoder_matrix<R>(s, key);
  }

  Mat<R> forward(const Mat<R>& u, CpuWorkspace<R>& ws) override {
    const int T = int(u.rows()), d = int(u.cols()), n = ws.threads;
    const Mat<R>& kv = cross_ ? enc_ : u;
    w_.multiply(q_raw_, u, kinds_[0], ws);
    w_.multiply(k_raw_, kv, kinds_[1], ws);
    w_.multiply(v_raw_, kv, kinds_[2], ws);
    if (residual_.mixes) {  // Fv (norms_.v is off: V is v_raw_)
      v_raw_ = v_raw_ * R(1.0 - residual_.lam) + *residual_.first * R(residual_.lam);
      residual_.first = nullptr;
    }
    size_normed(norms_.qk, q_, rq_, T, d, norms_.qk_slices(heads_));
    size_normed(norms_.qk, k_, rk_, T, d, norms_.qk_slices(heads_));
    size_normed(norms_.v, v_, rv_, T, d, heads_);
    if (whole_qk()) {  // OLMo-2: each Q and K row normalized whole before any head reads its slice
      head_norm_forward(norms_.kind, q_raw_, q_, rq_, 1, 0, gain_, eps_);
      head_norm_forward(norms_.kind, k_raw_, k_, rk_, 1, 0, gain_, eps_);
    }
    probs_.resize(std::size_t(heads_));
    o_.resize(T, d);
    for_each_head(heads_, head_forward_work(T, d / heads_), n, [&](int h) { attend(h); });
    Mat<R> out;
    w_.multiply(out, gated(u, ws), kinds_[3], ws);
    return out;
  }

  Mat<R> backward(const Mat<R>& u, const Mat<R>& dout, CpuWorkspace<R>& ws, WeightGradNorms& norms) override {
    norms.fill(kNaN);
    const int T = int(u.rows()), d = int(u.cols()), n = ws.threads;
    const Mat<R>& o = group_ ? og_ : o_;  // what W_O read
    w_.record(kinds_[3], o, dout);
    Mat<R> d_o;
    product_by_columns(d_o, dout, w_.draw(kinds_[3], ws).transpose(), false, n);
    Mat<R> dz;  // dLoss/dz of the gate's pre-activations; d_o becomes dLoss/d of the heads' output
    if (group_) gate_backward(d_o, dz);
    QkvGrads g;
    for (auto [raw, normed, on] : {std::tuple{&g.dq, &g.gq, norms_.qk}, std::tuple{&g.dk, &g.gk, norms_.qk},
                                   std::tuple{&g.dv, &g.gv, norms_.v}}) {
      raw->resize(T, d);
      if (on) normed->resize(T, d);
    }
    for_each_head(heads_, head_backward_work(T, d / heads_), n, [&](int h) { backpropagate(h, d_o, g); });
    if (whole_qk()) {  // every head's columns of g.gq and g.gk are in: the whole rows' norm backward
      head_norm_backward(norms_.kind, q_, g.gq, rq_, 1, 0, gain_, g.dq);
      head_norm_backward(norms_.kind, k_, g.gk, rk_, 1, 0, gain_, g.dk);
    }
    mix_values_backward(g.dv);
    const Mat<R>& kv = cross_ ? enc_ : u;
    double* nw = norms.data();
    gradient_norms<R>({{nw + int(kinds_[3]), &o, &dout},
                       {nw + int(kinds_[0]), &u, &g.dq},
                       {nw + int(kinds_[1]), &kv, &g.dk},
                       {nw + int(kinds_[2]), &kv, &g.dv}},
                      n);
    if (group_) {
      gradient_norms<R>({{nw + int(WeightKind::wga), &u, &dz}}, n);
      w_.record(WeightKind::wga, u, dz);
    }
    w_.record(kinds_[0], u, g.dq);
    w_.record(kinds_[1], kv, g.dk);
    w_.record(kinds_[2], kv, g.dv);
    Mat<R> du;
    product_by_columns(du, g.dq, w_.draw(kinds_[0], ws).transpose(), false, n);
    if (cross_) return du;  // E is a constant: K and V carry no gradient to u
    product_by_columns(du, g.dk, w_.draw(kinds_[1], ws).transpose(), true, n);
    product_by_columns(du, g.dv, w_.draw(kinds_[2], ws).transpose(), true, n);
    if (group_) product_by_columns(du, dz, w_.draw(WeightKind::wga, ws).transpose(), true, n);
    return du;
  }

  ValueResidual<Mat<R>>* value_residual() override { return cross_ ? nullptr : &residual_; }
  const Mat<R>& values() const override { return v(); }

 private:
  // The value residual's backward on dv = dLoss/dV (mixed, as the heads read it): dLoss/dV_1 = lam dv is
  // handed out and V's own share is (1 - lam) dv; V_1's source adds what the mixing branches sent it.
  void mix_values_backward(Mat<R>& dv) {
    if (residual_.mixes) {
      residual_.first_grad = dv * R(residual_.lam);
      dv *= R(1.0 - residual_.lam);
    }
    if (residual_.extra_grad.size() != 0) {
      dv += residual_.extra_grad;
      residual_.extra_grad = Mat<R>();
    }
  }

  // dLoss/d of Q, K, V as the projections give them (dq, dk, dv) and, where a per-head norm follows, of
  // its output (gq, gk, gv; empty where none).
  struct QkvGrads {
    Mat<R> dq, dk, dv, gq, gk, gv;
  };

  // Q, K, V as the logits and the mixing read them: after their per-head norms where there are norms.
  const Mat<R>& q() const { return norms_.qk ? q_ : q_raw_; }
  const Mat<R>& k() const { return norms_.qk ? k_ : k_raw_; }
  const Mat<R>& v() const { return norms_.v ? v_ : v_raw_; }

  // Whether Q and K are normalized per head (in attend and backpropagate) or whole (around the heads).
  bool per_head_qk() const { return norms_.qk && !norms_.qk_whole; }
  bool whole_qk() const { return norms_.qk && norms_.qk_whole; }

  // The buffers of a norm's output y and its rstd (slices per row), sized for T x d before they are filled.
  static void size_normed(bool on, Mat<R>& y, std::vector<double>& rstd, int T, int d, int slices) {
    if (!on) return;
    y.resize(T, d);
    rstd.resize(std::size_t(T) * slices);
  }

  // What W_O reads: the heads' output o_, or with a gate (sim/attention_gate.hpp) og_ = o_ * sigmoid(z_),
  // z_ = u W_g (T x G), each gate covering group_ coordinates.
  const Mat<R>& gated(const Mat<R>& u, CpuWorkspace<R>& ws) {
    if (!group_) return o_;
    w_.multiply(z_, u, WeightKind::wga, ws);
    og_.resize(o_.rows(), o_.cols());
    for (Eigen::Index t = 0; t < o_.rows(); ++t)
      for (Eigen::Index j = 0; j < z_.cols(); ++j)
        gate_forward_group(&o_(t, j * group_), &og_(t, j * group_), double(z_(t, j)), group_);
    return og_;
  }
  // The gate's backward: d_o from dLoss/d og_ to dLoss/d o_ in place, dz = dLoss/d z_.
  void gate_backward(Mat<R>& d_o, Mat<R>& dz) const {
    dz.resize(z_.rows(), z_.cols());
    for (Eigen::Index t = 0; t < z_.rows(); ++t)
      for (Eigen::Index j = 0; j < z_.cols(); ++j)
        dz(t, j) = R(gate_backward_group(&o_(t, j * group_), &d_o(t, j * group_), &d_o(t, j * group_),
                                         double(z_(t, j)), group_));
  }

  // Head h of the forward: its norms of Q, K, V, its softmax(logits) probs_[h] and its columns of o_.
  void attend(int h) {
    const int T = int(o_.rows()), dh = int(o_.cols()) / heads_;
    if (per_head_qk()) {
      head_norm_forward(norms_.kind, q_raw_, q_, rq_, heads_, h, gain_, eps_);
      head_norm_forward(norms_.kind, k_raw_, k_, rk_, heads_, h, gain_, eps_);
    }
    if (norms_.v) head_norm_forward(norms_.kind, v_raw_, v_, rv_, heads_, h, gain_, eps_);
    Mat<R> sc = head_logits(q(), k(), h, dh, logit_scale_);
    for (int t = 0; t < T; ++t) softmax_row(&sc(t, 0), T, causal_ ? t : T - 1);
    o_.middleCols(h * dh, dh).noalias() = sc * v().middleCols(h * dh, dh);
    probs_[std::size_t(h)] = std::move(sc);
  }

  // Head h of the backward, from d_o = dLoss/d o_: its columns of every matrix of g.
  void backpropagate(int h, const Mat<R>& d_o, QkvGrads& g) const {
    const int T = int(d_o.rows()), dh = int(d_o.cols()) / heads_;
    const Mat<R>& P = probs_[std::size_t(h)];
    const auto doh = d_o.middleCols(h * dh, dh);
    Mat<R>&gq = norms_.qk ? g.gq : g.dq, &gk = norms_.qk ? g.gk : g.dk, &gv = norms_.v ? g.gv : g.dv;
    gv.middleCols(h * dh, dh).noalias() = P.transpose() * doh;
    Mat<R> dP = doh * v().middleCols(h * dh, dh).transpose();
    for (int t = 0; t < T; ++t) softmax_backward_row(&P(t, 0), &dP(t, 0), T, logit_scale_);
    gq.middleCols(h * dh, dh).noalias() = dP * k().middleCols(h * dh, dh);
    gk.middleCols(h * dh, dh).noalias() = dP.transpose() * q().middleCols(h * dh, dh);
    if (per_head_qk()) {
      head_norm_backward(norms_.kind, q_, g.gq, rq_, heads_, h, gain_, g.dq);
      head_norm_backward(norms_.kind, k_, g.gk, rk_, heads_, h, gain_, g.dk);
    }
    if (norms_.v) head_norm_backward(norms_.kind, v_, g.gv, rv_, heads_, h, gain_, g.dv);
  }

  WeightSource<R> w_;
  int heads_;
  bool cross_, causal_;
  HeadNorms norms_;
  double eps_, gain_, logit_scale_;
  int group_;                        // coordinates per output gate; 0: no gate (sim/attention_gate.hpp)
  std::array<WeightKind, 4> kinds_;  // q, k, v, o
  Mat<R> enc_, q_raw_, k_raw_, v_raw_, q_, k_, v_, o_;
  Mat<R> z_, og_;  // the gate's pre-activations u W_g (T x G) and the gated output (T x d)
  std::vector<double> rq_, rk_, rv_;
  std::vector<Mat<R>> probs_;  // per head: softmax of its logits (T x T)
  ValueResidual<Mat<R>> residual_;
};

}  // namespace

template <class R>
std::unique_ptr<CpuBranch<R>> make_cpu_branch(const StackShape& s, const Placement& p, int k, SampleKey key,
                                              bool qkv_norm, UpdateHooks<R> hooks) {
  if (s.branch(k) != BranchKind::mlp) return std::make_unique<CpuAttention<R>>(s, p, k, key, qkv_norm, hooks);
  if (s.experts > 0) return make_cpu_moe<R>(s, p, k, key);
  return std::make_unique<CpuMlp<R>>(s, p, k, key, hooks);
}

template <class R>
std::unique_ptr<CpuBranch<R>> make_cpu_mlp(const StackShape& s, const Placement& p, int k, SampleKey key,
                                           std::uint32_t expert) {
  return std::make_unique<CpuMlp<R>>(s, p, k, key, UpdateHooks<R>{}, expert);
}

template std::unique_ptr<CpuBranch<float>> make_cpu_branch<float>(const StackShape&, const Placement&, int,
                                                                  SampleKey, bool, UpdateHooks<float>);
template std::unique_ptr<CpuBranch<double>> make_cpu_branch<double>(const StackShape&, const Placement&, int,
                                                                    SampleKey, bool, UpdateHooks<double>);
template std::unique_ptr<CpuBranch<float>> make_cpu_mlp<float>(const StackShape&, const Placement&, int,
                                                               SampleKey, std::uint32_t);
template std::unique_ptr<CpuBranch<double>> make_cpu_mlp<double>(const StackShape&, const Placement&, int,
                                                                 SampleKey, std::uint32_t);

}  // namespace normsim::sim
