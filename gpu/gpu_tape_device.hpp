// The CUDA device of the stack's tape (sim/tape.hpp): a batch of S samples, each value S x T x d on the
// device (sample-major), branches from gpu/gpu_branches.hpp. Branch statistics (branch_sq sums, weight-
// gradient norms) go to the context's DeviceStats, never to the host; the tape runs its reverse pass with
// ReverseMode::consume, freeing each value and gradient once passed on.
#pragma once
#include <array>
#include <memory>
#include <stdexcept>

#include "gpu/device_buffer.hpp"
#include "gpu/gpu_branches.hpp"
#include "sim/placement.hpp"
#include "sim/tape.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
class GpuTapeDevice {
 public:
  using Buffer = DeviceBuffer<R>;
  using Aux = DeviceBuffer<double>;  // a norm's row rstd; a scale's per-sample factors
  using Branch = GpuBranch<R>;

  GpuTapeDevice(const sim::StackShape& shape, const sim::Placement& placement, const GpuContext<R>& ctx);

  int batch() const { return ctx_.S; }
  const sim::StackShape& shape() const { return shape_; }
  std::size_t value_size() const { return std::size_t(ctx_.S) * shape_.tokens * shape_.width; }
  Buffer input(Buffer x) const;
  Buffer zeros() const;
  Buffer copy(const Buffer& b) const;
  static bool empty(const Buffer& b) { return b.empty(); }
  template <class T>
  static void free(DeviceBuffer<T>& b) {  // a value, gradient or Aux
    b.reset();
  }

  Buffer norm(const Buffer& x, sim::NormAt at, Aux& rstd) const;
  Buffer add(const Buffer& a, const Buffer& b) const;
  Buffer scale(const Buffer& a, const sim::Scalars& s, Aux& factors) const;
  // Admin's omega needs the value on the host: the one synchronization inside a forward pass.
  sim::Scalars mean_sq(const Buffer& a) const;
  std::unique_ptr<Branch> make_branch(int k, bool qkv_norm) const;
  Buffer branch_forward(Branch& br, const Buffer& u, int k) const;
  // a W_e per sample (sim/edges.hpp): u (S x T x rows) to x_0, or y to the logits (S x T x output_width).
  Buffer project(const Buffer& a, sim::Edge e);

  // Backward: `into` (empty: not yet reached) += the gradient passed on.
  void add_to(Buffer& into, const Buffer& g) const { add_scaled(into, g.get(), nullptr); }
  void add_to(Buffer& into, Buffer&& g) const;
  void add_scaled_to(Buffer& into, const Buffer& g, const Aux& f) const {
    add_scaled(into, g.get(), f.get());
  }
  void norm_backward_to(Buffer& into, const Buffer& x, const Buffer& y, const Buffer& g, const Aux& rstd,
                        sim::NormAt at) const;
  // The device writes weight-gradient norms to its context's DeviceStats whatever `gradw` says: passes
  // whose norms are not metrics run on a context with a discarded DeviceStats (BatchRun::side_context).
  Buffer branch_backward(Branch& br, const Buffer& u, const Buffer& g, int k, bool gradw) const;
  // Of z = a W_e: into += g W_e^T (when a_grad); the context's update records dW_e = a^T g.
  void project_backward_to(Buffer& into, const Buffer& a, const Buffer& g, sim::Edge e, bool a_grad);
  // The value residual (Fv, sim/value_residual.hpp), as sim/cpu/cpu_tape_device.hpp.
  void mix_values(Branch& br, const Buffer& first, double lam) const { sim::mix_values_into(br, first, lam); }
  Buffer branch_values(const Branch& br) const { return br.values(); }
  void add_values_grad(Branch& br, Buffer&& g) const {
    add_to(sim::value_residual_of(br).extra_grad, std::move(g));
  }
  Buffer branch_values_grad(Branch& br) const { return sim::take_values_grad<Branch, Buffer>(br); }

 private:
  sim::PointwiseNorm pointwise(sim::NormAt at) const {
    return {shape_.norm, shape_.cfg.norm_gain, at.alpha, at.shift};
  }
  void add_scaled(Buffer& into, const R* d_g, const double* d_factors) const;

  // W_e of every sample, drawn at its first use (W + dW through the context's `apply`).
  const Buffer& edge_matrix(sim::Edge e);

  sim::StackShape shape_;
  const sim::Placement& placement_;
  GpuContext<R> ctx_;
  std::array<Buffer, sim::kEdges> edges_;
};

// How the device reverses its tapes: freeing as it goes.
inline constexpr sim::ReverseMode kConsumingReverse{.floor = -1, .gradw = true, .consume = true};

// A batch's tape on the device.
template <class R>
using GpuTape = sim::Tape<GpuTapeDevice<R>>;

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu

extern template class normsim::sim::Tape<normsim::gpu::GpuTapeDevice<float>>;
extern template class normsim::sim::Tape<normsim::gpu::GpuTapeDevice<double>>;
