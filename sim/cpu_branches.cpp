#include "sim/cpu_branches.hpp"

#include <cmath>
#include <memory>

#include "sim/cpu_heads.hpp"
#include "sim/draws.hpp"
#include "sim/head_norms.hpp"
#include "sim/init.hpp"

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

template <class R>
class CpuAttention final : public CpuBranch<R> {
 public:
  CpuAttention(const StackShape& s, const Placement& p, int k, SampleKey key, bool qkv_norm)
      : heads_(s.heads),
        causal_(s.cfg.causal),
        norms_(head_norms(s.cfg, qkv_norm)),
        eps_(s.cfg.norm_eps),
        gain_(s.cfg.norm_gain) {
    wq_ = draw_weight<R>(s, p, k, key, WeightKind::wq);
    wk_ = draw_weight<R>(s, p, k, key, WeightKind::wk);
    wv_ = draw_weight<R>(s, p, k, key, WeightKind::wv);
    wo_ = draw_weight<R>(s, p, k, key, WeightKind::wo);
  }

  Mat<R> forward(const Mat<R>& u) override {
    u_ = u;
    const int T = int(u.rows()), d = int(u.cols()), dh = d / heads_;
    q_raw_ = u * wq_;
    k_raw_ = u * wk_;
    v_raw_ = u * wv_;
    normalize(norms_.qk, q_raw_, q_, rq_);
    normalize(norms_.qk, k_raw_, k_, rk_);
    normalize(norms_.v, v_raw_, v_, rv_);
    probs_.assign(heads_, Mat<R>());
    o_.resize(T, d);
    for (int h = 0; h < heads_; ++h) {
      Mat<R> sc = head_logits(q_, k_, h, dh);
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
    norms[int(WeightKind::wo)] = frobenius_of_AtB<R>(o_, dout);
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
    if (norms_.qk) {
      dq = head_norm_backward(norms_.kind, q_, dq, rq_, heads_, gain_);
      dk = head_norm_backward(norms_.kind, k_, dk, rk_, heads_, gain_);
    }
    if (norms_.v) dv = head_norm_backward(norms_.kind, v_, dv, rv_, heads_, gain_);
    norms[int(WeightKind::wq)] = frobenius_of_AtB<R>(u_, dq);
    norms[int(WeightKind::wk)] = frobenius_of_AtB<R>(u_, dk);
    norms[int(WeightKind::wv)] = frobenius_of_AtB<R>(u_, dv);
    Mat<R> du = dq * wq_.transpose();
    du.noalias() += dk * wk_.transpose();
    du.noalias() += dv * wv_.transpose();
    return du;
  }

 private:
  // y = the per-head norm of x when `on`, else x.
  void normalize(bool on, const Mat<R>& x, Mat<R>& y, std::vector<double>& rstd) const {
    if (on)
      head_norm_forward(norms_.kind, x, y, rstd, heads_, gain_, eps_);
    else
      y = x;
  }
  int heads_;
  bool causal_;
  HeadNorms norms_;
  double eps_, gain_;
  Mat<R> wq_, wk_, wv_, wo_, u_, q_raw_, k_raw_, v_raw_, q_, k_, v_, o_;
  std::vector<double> rq_, rk_, rv_;
  std::vector<Mat<R>> probs_;
};

}  // namespace

template <class R>
std::unique_ptr<CpuBranch<R>> make_cpu_branch(const StackShape& s, const Placement& p, int k, SampleKey key,
                                              bool qkv_norm) {
  if (s.branch(k) == BranchKind::attention) return std::make_unique<CpuAttention<R>>(s, p, k, key, qkv_norm);
  return std::make_unique<CpuMlp<R>>(s, p, k, key);
}

template std::unique_ptr<CpuBranch<float>> make_cpu_branch<float>(const StackShape&, const Placement&, int,
                                                                  SampleKey, bool);
template std::unique_ptr<CpuBranch<double>> make_cpu_branch<double>(const StackShape&, const Placement&, int,
                                                                    SampleKey, bool);

}  // namespace normsim::sim
