#include "gpu/gpu_branches.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "gpu/blas.hpp"
#include "gpu/gpu_mlp_device.hpp"
#include "gpu/gpu_moe.hpp"
#include "gpu/gpu_weights.hpp"
#include "gpu/kernels.hpp"
#include "gpu/memory_plan.hpp"
#include "gpu/stat_kernels.hpp"
#include "sim/attention_gate.hpp"
#include "sim/head_norms.hpp"
#include "sim/init.hpp"
#include "sim/norm_site.hpp"

namespace normsim::gpu {

namespace {

using sim::WeightKind;
namespace vocab = normsim::vocab;

// The MLP branch (sim/mlp_branch.hpp) run by the CUDA device, as a GpuBranch.
template <class R>
class GpuMlpBranch final : public GpuBranch<R> {
 public:
  GpuMlpBranch(const sim::StackShape& s, const sim::Placement& p, int k, const GpuContext<R>& ctx,
               std::uint32_t expert = 0)
      : device_(s, p, k, ctx, expert) {}

  DeviceBuffer<R> forward(const R* d_u) override {
    u_ = d_u;
    return mlp_.forward(device_, d_u);
  }
  DeviceBuffer<R> backward(const R* d_dout, double* d_gradw) override {
    return mlp_.backward(device_, u_, d_dout, d_gradw);
  }

 private:
  GpuMlpDevice<R> device_;
  sim::MlpBranch<GpuMlpDevice<R>> mlp_;
  const R* u_ = nullptr;  // the forward's input, valid until the backward (GpuBranch::forward)
};

// The decoder's encoder output of every sample (sim/encoder_output.hpp), S x T x d: sqrt(1 - rho) z per token
// plus sqrt(rho) c, c broadcast over the tokens by a product with a column of ones, then the norm per token.
template <class R>
DeviceBuffer<R> encoder_output(const sim::StackShape& s, const GpuContext<R>& ctx) {
  const int S = ctx.S, T = s.tokens, d = s.width;
  const double rho = s.cfg.encoder_cos;
  DeviceBuffer<R> e(std::size_t(S) * T * d), c(std::size_t(S) * d);
  gaussian_fill(e.get(), std::size_t(T) * d, S, ctx.d_samples, ctx.seed, 0, sim::Stream::encoder_tokens,
                std::sqrt(1.0 - rho));
  gaussian_fill(c.get(), std::size_t(d), S, ctx.d_samples, ctx.seed, 0, sim::Stream::encoder_common,
                std::sqrt(rho));
  const DeviceBuffer<R> ones = DeviceBuffer<R>::from_host(std::vector<R>(std::size_t(T), R(1)));
  gemm<R>(ctx.blas, false, false, T, d, 1, 1.0, ones.get(), 1, 0, c.get(), d, d, 1.0, e.get(), d,
          (long long)T * d, S);
  if (vocab::is_pointwise(s.norm)) {  // the encoder's final norm (sim/norm_site.hpp)
    const sim::NormAt at = sim::final_norm_at(s);
    pointwise_norm_forward(e.get(), e.get(), e.size(), {s.norm, s.cfg.norm_gain, at.alpha, at.shift});
    return e;
  }
  DeviceBuffer<double> rstd(std::size_t(S) * T);
  row_norm_forward(e.get(), e.get(), rstd.get(), S * T, d, s.norm, s.cfg.norm_gain, s.cfg.norm_eps);
  return e;
}

// Self-attention, or the decoder's cross-attention (K and V from the encoder output, no mask, matrices
// cq, ck, cv, co; the gradient reaches u through Q alone), as sim/cpu_branches.cpp; a self-attention's
// output gate (attention_gate) multiplies O by sigmoid(u W_g) before W_O (sim/attention_gate.hpp).
template <class R>
class GpuAttention final : public GpuBranch<R> {
 public:
  GpuAttention(const sim::StackShape& s, const sim::Placement& p, int k, const GpuContext<R>& ctx,
               bool qkv_norm)
      : ctx_(ctx),
        w_(s, p, k, ctx),
        heads_(s.heads),
        cross_(s.branch(k) == sim::BranchKind::cross_attention),
        causal_(s.cfg.causal && !cross_),
        norms_(sim::head_norms(s.cfg, qkv_norm)),
        eps_(s.cfg.norm_eps),
        gain_(s.cfg.norm_gain),
        logit_scale_(sim::logit_scale(s.cfg, s.width / s.heads)),
        T_(s.tokens),
        d_(s.width),
        group_(cross_ ? 0 : sim::gate_group(s.gate, s.width, s.heads)),
        kinds_{cross_ ? std::array{WeightKind::cq, WeightKind::ck, WeightKind::cv, WeightKind::co}
                      : std::array{WeightKind::wq, WeightKind::wk, WeightKind::wv, WeightKind::wo}} {
    if (cross_) enc_ = encoder_output(s, ctx);
  }

  // Heads are split from the tokens (S x T x d to S x heads x T x d_head) so each product is one
  // strided-batched GEMM over every (sample, head).
  DeviceBuffer<R> forward(const R* d_u) override {
    const int S = ctx_.S, T = T_, d = d_, dh = d / heads_, SH = S * heads_;
    const std::size_t n = std::size_t(S) * T * d;
    u_ = d_u;
    const R* kv = cross_ ? enc_.get() : d_u;
    q_ = split(project(d_u, kinds_[0], norms_.qk, norms_.qk_slices(heads_), rq_));
    k_ = split(project(kv, kinds_[1], norms_.qk, norms_.qk_slices(heads_), rk_));
    v_ = split(mixed(project(kv, kinds_[2], norms_.v, heads_, rv_)));
    p_ = DeviceBuffer<R>(std::size_t(SH) * T * T);  // S x heads x T x T
    const long long sh = (long long)T * dh, sp = (long long)T * T;
    gemm<R>(ctx_.blas, false, true, T, T, dh, logit_scale_, q_.get(), dh, sh, k_.get(), dh, sh, 0.0, p_.get(),
            T, sp, SH);
    softmax_forward(p_.get(), SH * T, T, causal_);
    DeviceBuffer<R> oh(n);
    gemm<R>(ctx_.blas, false, false, T, dh, T, 1.0, p_.get(), T, sp, v_.get(), dh, sh, 0.0, oh.get(), dh, sh,
            SH);
    o_ = merge(oh.get());
    DeviceBuffer<R> out(n);
    if (group_) {
      const int G = d / group_;
      z_ = DeviceBuffer<R>(std::size_t(S) * T * G);
      w_.forward(WeightKind::wga, d_u, z_.get());
      const DeviceBuffer<R> og = gated();
      w_.forward(kinds_[3], og.get(), out.get());
      return out;
    }
    w_.forward(kinds_[3], o_.get(), out.get());
    return out;
  }

  DeviceBuffer<R> backward(const R* d_dout, double* d_gradw) override {
    const int S = ctx_.S, T = T_, d = d_, dh = d / heads_, SH = S * heads_;
    const std::size_t n = std::size_t(S) * T * d;
    const long long sh = (long long)T * dh, sp = (long long)T * T;
    if (group_)  // W_O read the gated output, formed again from O and z
      w_.gradient(kinds_[3], gated().get(), d_dout, d_gradw);
    else
      w_.gradient(kinds_[3], o_.get(), d_dout, d_gradw);
    DeviceBuffer<R> d_o(n), dz;
    times_weight(ctx_.blas, d_dout, w_.get(kinds_[3]), d_o.get(), S, T, d, d, true, false);
    if (group_) {  // d_o becomes dLoss/dO, dz dLoss/dz
      dz = DeviceBuffer<R>(z_.size());
      attention_gate_backward(o_.get(), z_.get(), d_o.get(), d_o.get(), dz.get(), S * T, d, group_);
      z_.reset();
    }
    o_.reset();
    const DeviceBuffer<R> doh = split(std::move(d_o));
    DeviceBuffer<R> dqh(n), dkh(n), dvh(n), dp(std::size_t(SH) * T * T);
    gemm<R>(ctx_.blas, true, false, T, dh, T, 1.0, p_.get(), T, sp, doh.get(), dh, sh, 0.0, dvh.get(), dh, sh,
            SH);
    gemm<R>(ctx_.blas, false, true, T, T, dh, 1.0, doh.get(), dh, sh, v_.get(), dh, sh, 0.0, dp.get(), T, sp,
            SH);
    softmax_backward(p_.get(), dp.get(), SH * T, T, logit_scale_);
    p_.reset();
    gemm<R>(ctx_.blas, false, false, T, dh, T, 1.0, dp.get(), T, sp, k_.get(), dh, sh, 0.0, dqh.get(), dh, sh,
            SH);
    gemm<R>(ctx_.blas, true, false, T, dh, T, 1.0, dp.get(), T, sp, q_.get(), dh, sh, 0.0, dkh.get(), dh, sh,
            SH);
    dp.reset();
    DeviceBuffer<R> dq = merge(dqh.get()), dk = merge(dkh.get()), dv = merge(dvh.get());
    if (norms_.qk) {  // the norm's backward reads its output, in the tokens' layout
      norm_backward(q_, dq, rq_, norms_.qk_slices(heads_));
      norm_backward(k_, dk, rk_, norms_.qk_slices(heads_));
    }
    if (norms_.v) norm_backward(v_, dv, rv_, heads_);
    mix_values_backward(dv);
    q_.reset();
    k_.reset();
    v_.reset();
    const R* kv = cross_ ? enc_.get() : u_;
    w_.gradient(kinds_[0], u_, dq.get(), d_gradw);
    w_.gradient(kinds_[1], kv, dk.get(), d_gradw);
    w_.gradient(kinds_[2], kv, dv.get(), d_gradw);
    DeviceBuffer<R> du(n);
    times_weight(ctx_.blas, dq.get(), w_.get(kinds_[0]), du.get(), S, T, d, d, true, false);
    if (!cross_) {  // the encoder output is a constant: K and V carry no gradient to u
      times_weight(ctx_.blas, dk.get(), w_.get(kinds_[1]), du.get(), S, T, d, d, true, true);
      times_weight(ctx_.blas, dv.get(), w_.get(kinds_[2]), du.get(), S, T, d, d, true, true);
    }
    if (group_) {
      w_.gradient(WeightKind::wga, u_, dz.get(), d_gradw);
      times_weight(ctx_.blas, dz.get(), w_.get(WeightKind::wga), du.get(), S, T, d / group_, d, true, true);
    }
    w_.release();
    enc_.reset();
    return du;
  }

  sim::ValueResidual<DeviceBuffer<R>>* value_residual() override { return cross_ ? nullptr : &residual_; }
  DeviceBuffer<R> values() const override { return merge(v_.get()); }

 private:
  // Per sample, S copies of s (device doubles), the factors scaled_sum reads.
  DeviceBuffer<double> factors(double s) const {
    return DeviceBuffer<double>::from_host(std::vector<double>(std::size_t(ctx_.S), s));
  }
  // V mixed with V_1 where this branch takes part in the value residual (Fv): (1 - lam) V + lam V_1, in the
  // tokens' layout, as sim/cpu_branches.cpp.
  DeviceBuffer<R> mixed(DeviceBuffer<R> v) {
    if (!residual_.mixes) return v;
    const std::size_t per = std::size_t(T_) * d_;
    const DeviceBuffer<double> own = factors(1.0 - residual_.lam), first = factors(residual_.lam);
    scaled_sum(v.get(), v.get(), own.get(), static_cast<const R*>(nullptr), per, ctx_.S, false);
    scaled_sum(v.get(), residual_.first->get(), first.get(), static_cast<const R*>(nullptr), per, ctx_.S,
               true);
    residual_.first = nullptr;
    return v;
  }
  // The value residual's backward on dv = dLoss/dV, as sim/cpu_branches.cpp's.
  void mix_values_backward(DeviceBuffer<R>& dv) {
    const std::size_t per = std::size_t(T_) * d_;
    if (residual_.mixes) {
      const DeviceBuffer<double> own = factors(1.0 - residual_.lam), first = factors(residual_.lam);
      residual_.first_grad = DeviceBuffer<R>(dv.size());
      scaled_sum(residual_.first_grad.get(), dv.get(), first.get(), static_cast<const R*>(nullptr), per,
                 ctx_.S, false);
      scaled_sum(dv.get(), dv.get(), own.get(), static_cast<const R*>(nullptr), per, ctx_.S, false);
    }
    if (!residual_.extra_grad.empty()) {
      scaled_sum(dv.get(), residual_.extra_grad.get(), static_cast<const double*>(nullptr),
                 static_cast<const R*>(nullptr), per, ctx_.S, true);
      residual_.extra_grad.reset();
    }
  }
  // u W, then (normalized) the norm (sim/head_norms.hpp) of each of the `slices` slices of every row (heads,
  // or 1 for OLMo-2's whole projection); rstd kept for the backward.
  DeviceBuffer<R> project(const R* d_u, WeightKind w, bool normalized, int slices,
                          DeviceBuffer<double>& rstd) {
    const int S = ctx_.S;
    DeviceBuffer<R> out(std::size_t(S) * T_ * d_);
    w_.forward(w, d_u, out.get());
    if (normalized) {
      const int rows = S * T_ * slices;
      rstd = DeviceBuffer<double>(rows);
      row_norm_forward(out.get(), out.get(), rstd.get(), rows, d_ / slices, norms_.kind, gain_, eps_);
    }
    return out;
  }
  // O * sigmoid(z) (S x T x d), what W_O reads with a gate.
  DeviceBuffer<R> gated() const {
    DeviceBuffer<R> og(o_.size());
    attention_gate_forward(o_.get(), z_.get(), og.get(), ctx_.S * T_, d_, group_);
    return og;
  }
  // S x T x heads x d_head <-> S x heads x T x d_head.
  DeviceBuffer<R> split(DeviceBuffer<R> x) const {
    DeviceBuffer<R> y(x.size());
    swap_middle_axes(x.get(), y.get(), ctx_.S, T_, heads_, d_ / heads_);
    return y;
  }
  DeviceBuffer<R> merge(const R* d_xh) const {
    DeviceBuffer<R> y(std::size_t(ctx_.S) * T_ * d_);
    swap_middle_axes(d_xh, y.get(), ctx_.S, heads_, T_, d_ / heads_);
    return y;
  }
  // dx := the backward of the norm of `slices` slices per row, in place, from its output kept split by heads
  // (xh).
  void norm_backward(const DeviceBuffer<R>& xh, DeviceBuffer<R>& dx, const DeviceBuffer<double>& rstd,
                     int slices) const {
    const DeviceBuffer<R> y = merge(xh.get());
    row_norm_backward(y.get(), dx.get(), dx.get(), rstd.get(), ctx_.S * T_ * slices, d_ / slices, norms_.kind,
                      gain_, false);
  }
  GpuContext<R> ctx_;
  GpuWeights<R> w_;
  int heads_;
  bool cross_, causal_;
  sim::HeadNorms norms_;
  double eps_, gain_, logit_scale_;
  int T_, d_;
  int group_;                        // coordinates per output gate; 0: no gate
  std::array<WeightKind, 4> kinds_;  // q, k, v, o
  const R* u_ = nullptr;
  DeviceBuffer<R> enc_, q_, k_, v_, o_, p_, z_;  // z_: the gate's pre-activations u W_g (S x T x G)
  DeviceBuffer<double> rq_, rk_, rv_;
  sim::ValueResidual<DeviceBuffer<R>> residual_;
};

}  // namespace

namespace {

// x scaled per sample by `factor` (device, S doubles).
template <class R>
DeviceBuffer<R> scaled_copy(const R* d_x, std::size_t n, int S, const double* d_factor) {
  DeviceBuffer<R> y(n * S);
  scaled_sum(y.get(), d_x, d_factor, static_cast<const R*>(nullptr), n, S, false);
  return y;
}

// ||A^T B||_F^2 = <A A^T, B B^T>_F per sample into `sum`, the Grams formed in double from the operands
// scaled by `factor` (S for A, then S for B) and widened in one pass (scaled_widen: the bits of scaled_sum
// then widen). The CPU backend forms float32 Grams and, where their inner product cancels
// (sim::cancelled: less than 1 % of sum |Ga Gb| survives, as for W_K's gradient under collapsed tokens),
// A^T B in double; double Grams need no such fallback: their inner product is exact to double's rounding
// (~1e-16 of sum |Ga Gb| against float's ~1e-7) everywhere, and on the data-centre parts this backend
// targets a double GEMM of T x T x n runs at about float's non-tensor rate.
template <class R>
void gram_frobenius_sq(cublasHandle_t blas, const R* a, const R* b, const double* factor, int S, int T, int n,
                       int m, double* sum) {
  const auto scaled_in_double = [S, T](const R* x, const double* f, int k) {
    DeviceBuffer<double> w(std::size_t(S) * T * k);
    scaled_widen(x, f, std::size_t(T) * k, S, w.get());
    return w;
  };
  const DeviceBuffer<double> da = scaled_in_double(a, factor, n), db = scaled_in_double(b, factor + S, m);
  DeviceBuffer<double> ga(std::size_t(S) * T * T), gb(std::size_t(S) * T * T);
  gemm<double>(blas, false, true, T, T, n, 1.0, da.get(), n, (long long)T * n, da.get(), n, (long long)T * n,
               0.0, ga.get(), T, (long long)T * T, S);
  gemm<double>(blas, false, true, T, T, m, 1.0, db.get(), m, (long long)T * m, db.get(), m, (long long)T * m,
               0.0, gb.get(), T, (long long)T * T, S);
  sample_dot(ga.get(), gb.get(), std::size_t(T) * T, S, sum);
}

}  // namespace

// As sim::frobenius_of_AtB: the products run on A and B scaled per sample by powers of two (a float Gram of
// entries near 1e19 would overflow although the norm fits), the result is scaled back in double by
// frobenius_finish; a non-finite entry gives NaN, a zero operand 0. Nothing comes back to the host.
template <class R>
void batched_frobenius_of_AtB(cublasHandle_t blas, const R* d_a, const R* d_b, int S, int T, int n, int m,
                              double* d_out) {
  DeviceBuffer<double> d_stats(3 * std::size_t(S)), d_factor(2 * std::size_t(S));  // max|A|, max|B|, sum
  double* const max_a = d_stats.get();
  double* const max_b = max_a + S;
  double* const sum = max_b + S;
  sample_max_abs(d_a, std::size_t(T) * n, S, max_a);
  sample_max_abs(d_b, std::size_t(T) * m, S, max_b);
  power_of_two_scales(max_a, d_factor.get(), 2 * S);
  if (frobenius_by_gram(T, n, m)) {
    gram_frobenius_sq(blas, d_a, d_b, d_factor.get(), S, T, n, m, sum);
  } else {
    const DeviceBuffer<R> a = scaled_copy(d_a, std::size_t(T) * n, S, d_factor.get());
    const DeviceBuffer<R> b = scaled_copy(d_b, std::size_t(T) * m, S, d_factor.get() + S);
    DeviceBuffer<R> g(std::size_t(S) * n * m);
    gemm<R>(blas, true, false, n, m, T, 1.0, a.get(), n, (long long)T * n, b.get(), m, (long long)T * m, 0.0,
            g.get(), m, (long long)n * m, S);
    sample_dot(g.get(), g.get(), std::size_t(n) * m, S, sum);
  }
  frobenius_finish(max_a, max_b, sum, S, d_out);
}

template <class R>
std::unique_ptr<GpuBranch<R>> make_gpu_branch(const sim::StackShape& s, const sim::Placement& p, int k,
                                              const GpuContext<R>& ctx, bool qkv_norm) {
  if (s.branch(k) != sim::BranchKind::mlp) return std::make_unique<GpuAttention<R>>(s, p, k, ctx, qkv_norm);
  if (s.experts > 0) return make_gpu_moe<R>(s, p, k, ctx);
  return std::make_unique<GpuMlpBranch<R>>(s, p, k, ctx);
}

template <class R>
std::unique_ptr<GpuBranch<R>> make_gpu_mlp(const sim::StackShape& s, const sim::Placement& p, int k,
                                           const GpuContext<R>& ctx, std::uint32_t expert) {
  return std::make_unique<GpuMlpBranch<R>>(s, p, k, ctx, expert);
}

template std::unique_ptr<GpuBranch<float>> make_gpu_branch<float>(const sim::StackShape&,
                                                                  const sim::Placement&, int,
                                                                  const GpuContext<float>&, bool);
template std::unique_ptr<GpuBranch<double>> make_gpu_branch<double>(const sim::StackShape&,
                                                                    const sim::Placement&, int,
                                                                    const GpuContext<double>&, bool);
template std::unique_ptr<GpuBranch<float>> make_gpu_mlp<float>(const sim::StackShape&, const sim::Placement&,
                                                               int, const GpuContext<float>&, std::uint32_t);
template std::unique_ptr<GpuBranch<double>> make_gpu_mlp<double>(const sim::StackShape&,
                                                                 const sim::Placement&, int,
                                                                 const GpuContext<double>&, std::uint32_t);
template void batched_frobenius_of_AtB<float>(cublasHandle_t, const float*, const float*, int, int, int, int,
                                              double*);
template void batched_frobenius_of_AtB<double>(cublasHandle_t, const double*, const double*, int, int, int,
                                               int, double*);

}  // namespace normsim::gpu
