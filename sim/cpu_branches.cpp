#include "sim/cpu_branches.hpp"

#include <cmath>
#include <memory>
#include <tuple>
#include <utility>

#include "sim/attention_gate.hpp"
#include "sim/cpu_heads.hpp"
#include "sim/cpu_mlp_device.hpp"
#include "sim/cpu_moe.hpp"
#include "sim/draws.hpp"
#include "sim/encoder_output.hpp"
#include "sim/head_norms.hpp"
#include "sim/init.hpp"
#include "sim/norm_site.hpp"
#include "sim/softmax.hpp"
#include "sim/weight_source.hpp"

namespace normsim::sim {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The MLP branch (sim/mlp_branch.hpp) run by the CPU device, as a CpuBranch.
template <class R>
class CpuMlpBranch final : public CpuBranch<R> {
 public:
  CpuMlpBranch(const StackShape& s, const Placement& p, int k, SampleKey key, UpdateHooks<R> hooks,
               std::uint32_t expert = 0)
      : w_{s, p, k, key, hooks, expert} {}

  Mat<R> forward(const Mat<R>& u, CpuWorkspace<R>& ws) override {
    CpuMlpDevice<R> device(w_, ws);
    return mlp_.forward(device, u);
  }
  Mat<R> backward(const Mat<R>& u, const Mat<R>& dout, CpuWorkspace<R>& ws, WeightGradNorms& norms) override {
    norms.fill(kNaN);
    CpuMlpDevice<R> device(w_, ws);
    return mlp_.backward(device, u, dout, norms);
  }

 private:
  WeightSource<R> w_;
  MlpBranch<CpuMlpDevice<R>> mlp_;
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
  return std::make_unique<CpuMlpBranch<R>>(s, p, k, key, hooks);
}

template <class R>
std::unique_ptr<CpuBranch<R>> make_cpu_mlp(const StackShape& s, const Placement& p, int k, SampleKey key,
                                           std::uint32_t expert) {
  return std::make_unique<CpuMlpBranch<R>>(s, p, k, key, UpdateHooks<R>{}, expert);
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
