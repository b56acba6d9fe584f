// The CUDA device of the MLP branch (sim/mlp_branch.hpp): a batch of S samples, each buffer S x T x n on the
// device, products cuBLAS strided-batched over the samples (gpu/gpu_weights.hpp), the activation and its
// backward one kernel each over the whole batch (gpu/kernels.hpp: activation_*, swiglu_*).
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "gpu/device_buffer.hpp"
#include "gpu/gpu_branches.hpp"
#include "gpu/gpu_weights.hpp"
#include "gpu/kernels.hpp"
#include "sim/mlp_branch.hpp"
#include "sim/placement.hpp"
#include "sim/stack.hpp"

namespace normsim::gpu {

template <class R>
class GpuMlpDevice {
 public:
  using Buffer = DeviceBuffer<R>;
  using In = const R*;
  using NormsOut =
      double*;  // DeviceStats' lf_gradw block: the norm of matrix w of sample s at [int(w) S + s]
  struct Hidden {
    DeviceBuffer<R> h, g;  // u W1 and, for SwiGLU, u Wgate (S x T x H)
  };

  GpuMlpDevice(const sim::StackShape& s, const sim::Placement& p, int k, const GpuContext<R>& ctx,
               std::uint32_t expert)
      : s_(s), ctx_(ctx), w_(s, p, k, ctx, expert) {}

  bool swiglu() const { return s_.swiglu; }
  static const R* view(const DeviceBuffer<R>& b) { return b.get(); }
  // x (S x T x d, a branch input or its output's gradient) as the bf16 products read it.
  const R* operand(const R* x, DeviceBuffer<R>& copy) const {
    if constexpr (std::is_same_v<R, float>) {
      if (!w_.bf16()) return x;
      const std::size_t n = std::size_t(ctx_.S) * s_.tokens * s_.width;
      copy = DeviceBuffer<R>(n);
      round_to_bf16(x, copy.get(), nullptr, n);
      return copy.get();
    }
    return x;
  }
  void release(Hidden& hid) {
    hid.h.reset();
    hid.g.reset();
    w_.release();
  }

  void project(const R* x, sim::WeightKind w, DeviceBuffer<R>& out) {
    out = DeviceBuffer<R>(rows() * s_.fan_out(w));
    w_.forward(w, x, out.get());
  }
  void project_activated(const R* u, sim::WeightKind w, Hidden& hid, DeviceBuffer<R>& a) {
    project(u, w, hid.h);
    a = activations(hid);
  }
  // In bf16 act(h) is rounded once, an op on a bf16 product; SwiGLU's fused kernels round once where the
  // spec rounds twice, so the backend refuses SwiGLU in bf16 (gpu/cuda_backend.cpp, bf16_cuda_refusal).
  DeviceBuffer<R> activations(const Hidden& hid) const {
    const std::size_t nh = hid.h.size();
    DeviceBuffer<R> a(nh);
    if (s_.swiglu)
      swiglu_forward(hid.g.get(), hid.h.get(), a.get(), nh);
    else
      activation_forward(hid.h.get(), a.get(), nh, s_.act);
    round_if_bf16(w_.bf16(), a.get(), nh);
    return a;
  }
  void back_project_activated(const R* dy, sim::WeightKind w, const Hidden& hid, DeviceBuffer<R>& dh,
                              DeviceBuffer<R>& dg) {
    const std::size_t nh = hid.h.size();
    DeviceBuffer<R> da(nh);
    w_.backward(w, dy, da.get());
    if (s_.swiglu) {
      dh = DeviceBuffer<R>(nh);
      swiglu_backward(hid.g.get(), hid.h.get(), da.get(), da.get(), dh.get(), nh);  // da becomes dg
      dg = std::move(da);
      return;
    }
    activation_backward(hid.h.get(), da.get(), da.get(), nh, s_.act);  // da becomes dh
    round_if_bf16(w_.bf16(), da.get(), nh);
    dh = std::move(da);
  }
  // Accumulating in bf16, the product is rounded on its own and then added (scaled_sum with no factor).
  void back_project(const R* dy, sim::WeightKind w, DeviceBuffer<R>& dx, bool accumulate) {
    const int n_in = s_.fan_in(w), n_out = s_.fan_out(w);
    if (accumulate && !w_.bf16())
      return times_weight(ctx_.blas, dy, w_.get(w), dx.get(), ctx_.S, s_.tokens, n_out, n_in, true, true);
    DeviceBuffer<R> product(rows() * n_in);
    w_.backward(w, dy, product.get());
    if (!accumulate) {
      dx = std::move(product);
      return;
    }
    scaled_sum(dx.get(), product.get(), static_cast<const double*>(nullptr), static_cast<const R*>(nullptr),
               std::size_t(s_.tokens) * n_in, ctx_.S, true);
  }
  void weight_gradients(std::initializer_list<sim::WeightGradient<In>> grads, double* d_gradw) {
    for (const sim::WeightGradient<In>& g : grads) w_.gradient(g.w, g.a, g.b, d_gradw);
  }

 private:
  std::size_t rows() const { return std::size_t(ctx_.S) * s_.tokens; }  // of every sample's T x n matrix

  const sim::StackShape& s_;
  GpuContext<R> ctx_;
  GpuWeights<R> w_;
};

}  // namespace normsim::gpu
