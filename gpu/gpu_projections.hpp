// The products every CUDA branch device shares (gpu/gpu_mlp_device.hpp, gpu/gpu_attention_device.hpp): a
// batch of S samples, each buffer S x T x n on the device, products cuBLAS strided-batched over the samples
// on the sublayer's weights (gpu/gpu_weights.hpp), bias and bf16 rounding included, and the weight
// gradients' norms and records, each taken as it comes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <type_traits>
#include <utility>

#include "gpu/device_buffer.hpp"
#include "gpu/gpu_branches.hpp"
#include "gpu/gpu_weights.hpp"
#include "gpu/ops.hpp"
#include "sim/mlp_branch.hpp"
#include "sim/placement.hpp"
#include "sim/stack.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
class GpuProjections {
 public:
  using Buffer = DeviceBuffer<R>;
  using In = const R*;
  using NormsOut =
      double*;  // DeviceStats' lf_gradw block: the norm of matrix w of sample s at [int(w) S + s]

  GpuProjections(const sim::StackShape& s, const sim::Placement& p, int k, const GpuContext<R>& ctx,
                 std::uint32_t index)
      : s_(s), ctx_(ctx), w_(s, p, k, ctx, index) {}

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

  void project(const R* x, sim::WeightKind w, DeviceBuffer<R>& out) {
    out = DeviceBuffer<R>(rows() * s_.fan_out(w));
    w_.forward(w, x, out.get());
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
  // Taken at once, so that its operands can be freed.
  void weight_gradient_early(const sim::WeightGradient<In>& g, double* d_gradw) {
    weight_gradients({g}, d_gradw);
  }

 protected:
  std::size_t rows() const { return std::size_t(ctx_.S) * s_.tokens; }  // of every sample's T x n matrix

  const sim::StackShape& s_;
  GpuContext<R> ctx_;
  GpuWeights<R> w_;
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
