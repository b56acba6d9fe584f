// The CUDA device of the attention branch (sim/attention_branch.hpp): a batch of S samples, the products
// shared with the MLP (gpu/gpu_projections.hpp). Q, K, V are normalized as whole rows of `slices` slices
// (one kernel over the batch), then split from the tokens (S x T x d to S x heads x T x d_head) so each
// head's product is one strided-batched GEMM over every (sample, head). The gated output is formed again for
// Wo's gradient rather than kept, and O is freed before the heads' backward (gpu/memory_plan.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "gpu/gpu_projections.hpp"
#include "sim/attention_branch.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
class GpuAttentionDevice : public GpuProjections<R> {
  using GpuProjections<R>::ctx_;
  using GpuProjections<R>::w_;

 public:
  struct Heads {
    DeviceBuffer<R> q, k, v;  // projected (S x T x d), split by heads after attend (S x heads x T x d_head)
    DeviceBuffer<R> o, p, z;  // the heads' output (S x T x d), the probabilities (S x heads x T x T), u Wga
    DeviceBuffer<R> enc;      // the decoder's encoder output (cross-attention)
    DeviceBuffer<double> rq, rk, rv;
  };

  GpuAttentionDevice(const sim::StackShape& s, const sim::Placement& p, int k, const GpuContext<R>& ctx,
                     const sim::AttentionShape& a)
      : GpuProjections<R>(s, p, k, ctx, 0), a_(a), T_(s.tokens), d_(s.width) {}

  void attend(Heads& h);
  void attend_backward(Heads& h, DeviceBuffer<R>& d_o, DeviceBuffer<R>& dq, DeviceBuffer<R>& dk,
                       DeviceBuffer<R>& dv);
  // O * sigmoid(z) (S x T x d) into scratch, what W_O reads with a gate; O without.
  const R* wo_input(const Heads& h, DeviceBuffer<R>& scratch) const {
    if (!a_.group) return h.o.get();
    scratch = DeviceBuffer<R>(h.o.size());
    attention_gate_forward(h.o.get(), h.z.get(), scratch.get(), ctx_.S * T_, d_, a_.group);
    return scratch.get();
  }
  void gate_backward(Heads& h, DeviceBuffer<R>& d_o, DeviceBuffer<R>& dz) const {
    dz = DeviceBuffer<R>(h.z.size());
    attention_gate_backward(h.o.get(), h.z.get(), d_o.get(), d_o.get(), dz.get(), ctx_.S * T_, d_, a_.group);
    h.z.reset();
  }
  void mix_values(DeviceBuffer<R>& v, const sim::ValueResidual<DeviceBuffer<R>>& r) const;
  void mix_values_backward(DeviceBuffer<R>& dv, sim::ValueResidual<DeviceBuffer<R>>& r) const;
  // V as the heads read it, S x T x d (after forward).
  DeviceBuffer<R> values(const Heads& h) const { return merge(h.v.get()); }
  void release(Heads& h) {
    w_.release();
    h.enc.reset();
  }

 private:
  // Per sample, S copies of s (device doubles), the factors scaled_sum reads.
  DeviceBuffer<double> factors(double s) const {
    return DeviceBuffer<double>::from_host(std::vector<double>(std::size_t(ctx_.S), s));
  }
  // x normalized in place (sim/head_norms.hpp) in `slices` slices per row where `on`, rstd kept, then split.
  DeviceBuffer<R> normalized_split(DeviceBuffer<R> x, bool on, int slices, DeviceBuffer<double>& rstd) const {
    if (on) {
      const int rows = ctx_.S * T_ * slices;
      rstd = DeviceBuffer<double>(rows);
      row_norm_forward(x.get(), x.get(), rstd.get(), rows, d_ / slices, a_.norms.kind, a_.gain, a_.eps);
    }
    return split(std::move(x));
  }
  // S x T x heads x d_head <-> S x heads x T x d_head.
  DeviceBuffer<R> split(DeviceBuffer<R> x) const {
    DeviceBuffer<R> y(x.size());
    swap_middle_axes(x.get(), y.get(), ctx_.S, T_, a_.heads, d_ / a_.heads);
    return y;
  }
  DeviceBuffer<R> merge(const R* d_xh) const {
    DeviceBuffer<R> y(std::size_t(ctx_.S) * T_ * d_);
    swap_middle_axes(d_xh, y.get(), ctx_.S, a_.heads, T_, d_ / a_.heads);
    return y;
  }
  // dx := the backward of the norm of `slices` slices per row, in place, from its output kept split by heads
  // (xh).
  void norm_backward(const DeviceBuffer<R>& xh, DeviceBuffer<R>& dx, const DeviceBuffer<double>& rstd,
                     int slices) const {
    const DeviceBuffer<R> y = merge(xh.get());
    row_norm_backward(y.get(), dx.get(), dx.get(), rstd.get(), ctx_.S * T_ * slices, d_ / slices,
                      a_.norms.kind, a_.gain, false);
  }

  const sim::AttentionShape& a_;
  int T_, d_;
};

template <class R>
void GpuAttentionDevice<R>::attend(Heads& h) {
  const int S = ctx_.S, T = T_, dh = d_ / a_.heads, SH = S * a_.heads;
  const sim::HeadNorms& n = a_.norms;
  h.q = normalized_split(std::move(h.q), n.qk, n.qk_slices(a_.heads), h.rq);
  h.k = normalized_split(std::move(h.k), n.qk, n.qk_slices(a_.heads), h.rk);
  h.v = normalized_split(std::move(h.v), n.v, a_.heads, h.rv);
  h.p = DeviceBuffer<R>(std::size_t(SH) * T * T);
  const long long sh = (long long)T * dh, sp = (long long)T * T;
  gemm<R>(ctx_.blas, false, true, T, T, dh, a_.logit_scale, h.q.get(), dh, sh, h.k.get(), dh, sh, 0.0,
          h.p.get(), T, sp, SH);
  softmax_forward(h.p.get(), SH * T, T, a_.causal);
  DeviceBuffer<R> oh(std::size_t(S) * T * d_);
  gemm<R>(ctx_.blas, false, false, T, dh, T, 1.0, h.p.get(), T, sp, h.v.get(), dh, sh, 0.0, oh.get(), dh, sh,
          SH);
  h.o = merge(oh.get());
}

// d_o (dLoss/dO) is consumed; O, P, and the split Q, K, V are freed as soon as they are read.
template <class R>
void GpuAttentionDevice<R>::attend_backward(Heads& h, DeviceBuffer<R>& d_o, DeviceBuffer<R>& dq,
                                            DeviceBuffer<R>& dk, DeviceBuffer<R>& dv) {
  const int S = ctx_.S, T = T_, dh = d_ / a_.heads, SH = S * a_.heads;
  const std::size_t n = std::size_t(S) * T * d_;
  const long long sh = (long long)T * dh, sp = (long long)T * T;
  h.o.reset();
  const DeviceBuffer<R> doh = split(std::move(d_o));
  DeviceBuffer<R> dqh(n), dkh(n), dvh(n), dp(std::size_t(SH) * T * T);
  gemm<R>(ctx_.blas, true, false, T, dh, T, 1.0, h.p.get(), T, sp, doh.get(), dh, sh, 0.0, dvh.get(), dh, sh,
          SH);
  gemm<R>(ctx_.blas, false, true, T, T, dh, 1.0, doh.get(), dh, sh, h.v.get(), dh, sh, 0.0, dp.get(), T, sp,
          SH);
  softmax_backward(h.p.get(), dp.get(), SH * T, T, a_.logit_scale);
  h.p.reset();
  gemm<R>(ctx_.blas, false, false, T, dh, T, 1.0, dp.get(), T, sp, h.k.get(), dh, sh, 0.0, dqh.get(), dh, sh,
          SH);
  gemm<R>(ctx_.blas, true, false, T, dh, T, 1.0, dp.get(), T, sp, h.q.get(), dh, sh, 0.0, dkh.get(), dh, sh,
          SH);
  dp.reset();
  dq = merge(dqh.get()), dk = merge(dkh.get()), dv = merge(dvh.get());
  if (a_.norms.qk) {  // the norm's backward reads its output, in the tokens' layout
    norm_backward(h.q, dq, h.rq, a_.norms.qk_slices(a_.heads));
    norm_backward(h.k, dk, h.rk, a_.norms.qk_slices(a_.heads));
  }
  if (a_.norms.v) norm_backward(h.v, dv, h.rv, a_.heads);
  h.q.reset();
  h.k.reset();
  h.v.reset();
}

// V <- (1 - lam) V + lam V_1, in the tokens' layout.
template <class R>
void GpuAttentionDevice<R>::mix_values(DeviceBuffer<R>& v,
                                       const sim::ValueResidual<DeviceBuffer<R>>& r) const {
  const std::size_t per = std::size_t(T_) * d_;
  const DeviceBuffer<double> own = factors(1.0 - r.lam), first = factors(r.lam);
  scaled_sum(v.get(), v.get(), own.get(), static_cast<const R*>(nullptr), per, ctx_.S, false);
  scaled_sum(v.get(), r.first->get(), first.get(), static_cast<const R*>(nullptr), per, ctx_.S, true);
}

// dv = dLoss/dV (mixed): dLoss/dV_1 = lam dv handed out, V's own share (1 - lam) dv, plus what later mixing
// branches sent V_1's source (as sim/cpu/cpu_attention_device.hpp).
template <class R>
void GpuAttentionDevice<R>::mix_values_backward(DeviceBuffer<R>& dv,
                                                sim::ValueResidual<DeviceBuffer<R>>& r) const {
  const std::size_t per = std::size_t(T_) * d_;
  if (r.mixes) {
    const DeviceBuffer<double> own = factors(1.0 - r.lam), first = factors(r.lam);
    r.first_grad = DeviceBuffer<R>(dv.size());
    scaled_sum(r.first_grad.get(), dv.get(), first.get(), static_cast<const R*>(nullptr), per, ctx_.S, false);
    scaled_sum(dv.get(), dv.get(), own.get(), static_cast<const R*>(nullptr), per, ctx_.S, false);
  }
  if (!r.extra_grad.empty()) {
    scaled_sum(dv.get(), r.extra_grad.get(), static_cast<const double*>(nullptr),
               static_cast<const R*>(nullptr), per, ctx_.S, true);
    r.extra_grad.reset();
  }
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
