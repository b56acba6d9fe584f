#include "sim/cpu_branches.hpp"

#include <cmath>
#include <memory>

#include "sim/draws.hpp"
#include "sim/encoder_output.hpp"
#include "sim/init.hpp"
#include "sim/rownorm.hpp"

namespace normsim::sim {

namespace {

template <class R>
Mat<R> draw_weight(const StackShape& s, const Placement& p, int k, SampleKey key, WeightKind w) {
  Mat<R> m(s.fan_in(w), s.fan_out(w));
  const DrawKey dk{key.seed, key.sample, std::uint32_t(k), static_cast<Stream>(w)};
  fill_gaussian(m.data(), std::size_t(m.size()), dk, weight_std(s, p, w));
  return m;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <class R>
class CpuMlp final : public CpuBranch<R> {
 public:
  CpuMlp(const StackShape& s, const Placement& p, int k, SampleKey key) : act_(s.act), swiglu_(s.swiglu) {
    w1_ = draw_weight<R>(s, p, k, key, WeightKind::w1);
    w2_ = draw_weight<R>(s, p, k, key, WeightKind::w2);
    if (swiglu_) wg_ = draw_weight<R>(s, p, k, key, WeightKind::wgate);
  }

  Mat<R> forward(const Mat<R>& u) override {
    u_ = u;
    h_ = u * w1_;  // T x H
    if (swiglu_) {
      g_ = u * wg_;
      a_ = g_.unaryExpr([](R z) { return activate(Activation::silu, z); }).cwiseProduct(h_);
    } else {
      const Activation act = act_;
      a_ = h_.unaryExpr([act](R z) { return activate(act, z); });
    }
    return a_ * w2_;
  }

  Mat<R> backward(const Mat<R>& dout, WeightGradNorms& norms) override {
    norms.fill(kNaN);
    norms[int(WeightKind::w2)] = frobenius_of_AtB<R>(a_, dout);
    Mat<R> da = dout * w2_.transpose();
    Mat<R> du;
    if (swiglu_) {
      // a = silu(g) * h:  dg = da * h * silu'(g),  dh = da * silu(g)
      Mat<R> dg = da.cwiseProduct(h_).cwiseProduct(
          g_.unaryExpr([](R z) { return activate_derivative(Activation::silu, z); }));
      Mat<R> dh = da.cwiseProduct(g_.unaryExpr([](R z) { return activate(Activation::silu, z); }));
      norms[int(WeightKind::wgate)] = frobenius_of_AtB<R>(u_, dg);
      norms[int(WeightKind::w1)] = frobenius_of_AtB<R>(u_, dh);
      du = dg * wg_.transpose();
      du.noalias() += dh * w1_.transpose();
    } else {
      const Activation act = act_;
      Mat<R> dh = da.cwiseProduct(h_.unaryExpr([act](R z) { return activate_derivative(act, z); }));
      norms[int(WeightKind::w1)] = frobenius_of_AtB<R>(u_, dh);
      du = dh * w1_.transpose();
    }
    return du;
  }

 private:
  Activation act_;
  bool swiglu_;
  Mat<R> w1_, w2_, wg_, u_, h_, g_, a_;
};

// Per-head RMSNorm of the rows of a T x d matrix with gain norm_gain (like every norm at init): HybridNorm's
// QKV normalization.
template <class R>
void head_rms_forward(const Mat<R>& x, Mat<R>& y, std::vector<double>& rstd, int heads, double gain,
                      double eps) {
  const int T = int(x.rows()), d = int(x.cols()), dh = d / heads;
  y.resize(T, d);
  rstd.resize(std::size_t(T) * heads);
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < heads; ++h)
      rstd[std::size_t(t) * heads + h] =
          row_norm_forward(NormKind::rmsnorm, x.data() + std::size_t(t) * d + h * dh,
                           y.data() + std::size_t(t) * d + h * dh, dh, gain, eps);
}

template <class R>
Mat<R> head_rms_backward(const Mat<R>& y, const Mat<R>& dy, const std::vector<double>& rstd, int heads,
                         double gain) {
  const int T = int(y.rows()), d = int(y.cols()), dh = d / heads;
  Mat<R> dx(T, d);
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < heads; ++h) {
      const std::size_t off = std::size_t(t) * d + h * dh;
      row_norm_backward(NormKind::rmsnorm, y.data() + off, dy.data() + off, dx.data() + off, dh, gain,
                        rstd[std::size_t(t) * heads + h], false);
    }
  return dx;
}

// The decoder's encoder output E (T x d) of one sample (sim/encoder_output.hpp).
template <class R>
Mat<R> encoder_matrix(const StackShape& s, SampleKey key) {
  const int T = s.tokens, d = s.width;
  Mat<R> e(T, d), E(T, d);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < d; ++i) e(t, i) = R(encoder_entry(key.seed, key.sample, t, i, d, s.cfg.encoder_cos));
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
  CpuAttention(const StackShape& s, const Placement& p, int k, SampleKey key, bool qkv_norm)
      : heads_(s.heads),
        cross_(s.branch(k) == BranchKind::cross_attention),
        causal_(s.cfg.causal && !cross_),
        qkv_norm_(qkv_norm),
        eps_(s.cfg.norm_eps),
        gain_(s.cfg.norm_gain),
        kinds_{cross_ ? std::array{WeightKind::cq, WeightKind::ck, WeightKind::cv, WeightKind::co}
                      : std::array{WeightKind::wq, WeightKind::wk, WeightKind::wv, WeightKind::wo}} {
    wq_ = draw_weight<R>(s, p, k, key, kinds_[0]);
    wk_ = draw_weight<R>(s, p, k, key, kinds_[1]);
    wv_ = draw_weight<R>(s, p, k, key, kinds_[2]);
    wo_ = draw_weight<R>(s, p, k, key, kinds_[3]);
    if (cross_) enc_ = encoder_matrix<R>(s, key);
  }

  Mat<R> forward(const Mat<R>& u) override {
    u_ = u;
    const int T = int(u.rows()), d = int(u.cols()), dh = d / heads_;
    const Mat<R>& kv = cross_ ? enc_ : u;
    q_raw_ = u * wq_;
    k_raw_ = kv * wk_;
    v_raw_ = kv * wv_;
    if (qkv_norm_) {
      head_rms_forward(q_raw_, q_, rq_, heads_, gain_, eps_);
      head_rms_forward(k_raw_, k_, rk_, heads_, gain_, eps_);
      head_rms_forward(v_raw_, v_, rv_, heads_, gain_, eps_);
    } else {
      q_ = q_raw_;
      k_ = k_raw_;
      v_ = v_raw_;
    }
    const R inv_sqrt = R(1.0 / std::sqrt(double(dh)));
    probs_.assign(heads_, Mat<R>());
    o_.resize(T, d);
    for (int h = 0; h < heads_; ++h) {
      Mat<R> sc = (q_.middleCols(h * dh, dh) * k_.middleCols(h * dh, dh).transpose()) * inv_sqrt;
      for (int t = 0; t < T; ++t) {
        const int last = causal_ ? t : T - 1;
        R mx = sc(t, 0);
        for (int s = 1; s <= last; ++s) mx = std::max(mx, sc(t, s));
        double sum = 0;
        for (int s = 0; s <= last; ++s) sum += std::exp(double(sc(t, s) - mx));
        for (int s = 0; s < T; ++s) sc(t, s) = s <= last ? R(std::exp(double(sc(t, s) - mx)) / sum) : R(0);
      }
      o_.middleCols(h * dh, dh).noalias() = sc * v_.middleCols(h * dh, dh);
      probs_[h] = std::move(sc);
    }
    return o_ * wo_;
  }

  Mat<R> backward(const Mat<R>& dout, WeightGradNorms& norms) override {
    norms.fill(kNaN);
    const int T = int(u_.rows()), d = int(u_.cols()), dh = d / heads_;
    norms[int(kinds_[3])] = frobenius_of_AtB<R>(o_, dout);
    const Mat<R> d_o = dout * wo_.transpose();
    Mat<R> dq(T, d), dk(T, d), dv(T, d);
    const R inv_sqrt = R(1.0 / std::sqrt(double(dh)));
    for (int h = 0; h < heads_; ++h) {
      const Mat<R>& P = probs_[h];
      const auto doh = d_o.middleCols(h * dh, dh);
      dv.middleCols(h * dh, dh).noalias() = P.transpose() * doh;
      Mat<R> dP = doh * v_.middleCols(h * dh, dh).transpose();
      // softmax backward, row by row: dS = P * (dP - sum_s dP P)
      for (int t = 0; t < T; ++t) {
        double dot = 0;
        for (int s = 0; s < T; ++s) dot += double(dP(t, s)) * double(P(t, s));
        for (int s = 0; s < T; ++s) dP(t, s) = R(double(P(t, s)) * (double(dP(t, s)) - dot)) * inv_sqrt;
      }
      dq.middleCols(h * dh, dh).noalias() = dP * k_.middleCols(h * dh, dh);
      dk.middleCols(h * dh, dh).noalias() = dP.transpose() * q_.middleCols(h * dh, dh);
    }
    if (qkv_norm_) {
      dq = head_rms_backward(q_, dq, rq_, heads_, gain_);
      dk = head_rms_backward(k_, dk, rk_, heads_, gain_);
      dv = head_rms_backward(v_, dv, rv_, heads_, gain_);
    }
    const Mat<R>& kv = cross_ ? enc_ : u_;
    norms[int(kinds_[0])] = frobenius_of_AtB<R>(u_, dq);
    norms[int(kinds_[1])] = frobenius_of_AtB<R>(kv, dk);
    norms[int(kinds_[2])] = frobenius_of_AtB<R>(kv, dv);
    Mat<R> du = dq * wq_.transpose();
    if (cross_) return du;  // E is a constant: K and V carry no gradient to u
    du.noalias() += dk * wk_.transpose();
    du.noalias() += dv * wv_.transpose();
    return du;
  }

 private:
  int heads_;
  bool cross_, causal_, qkv_norm_;
  double eps_, gain_;
  std::array<WeightKind, 4> kinds_;  // q, k, v, o
  Mat<R> wq_, wk_, wv_, wo_, enc_, u_, q_raw_, k_raw_, v_raw_, q_, k_, v_, o_;
  std::vector<double> rq_, rk_, rv_;
  std::vector<Mat<R>> probs_;
};

}  // namespace

template <class R>
std::unique_ptr<CpuBranch<R>> make_cpu_branch(const StackShape& s, const Placement& p, int k, SampleKey key,
                                              bool qkv_norm) {
  if (s.branch(k) != BranchKind::mlp) return std::make_unique<CpuAttention<R>>(s, p, k, key, qkv_norm);
  return std::make_unique<CpuMlp<R>>(s, p, k, key);
}

template std::unique_ptr<CpuBranch<float>> make_cpu_branch<float>(const StackShape&, const Placement&, int,
                                                                  SampleKey, bool);
template std::unique_ptr<CpuBranch<double>> make_cpu_branch<double>(const StackShape&, const Placement&, int,
                                                                    SampleKey, bool);

}  // namespace normsim::sim
