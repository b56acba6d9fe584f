// The CUDA backend's tape: sim::StackOps on the device for a batch of S samples (a Value is S x T x d,
// sample-major), and its reverse pass; the twin of sim/cpu_graph.cpp. Memory: after the forward pass,
// release_forward() frees every value the backward does not read (only norm outputs and branch inputs
// are read); during the backward, a gradient is freed once it has been passed on. Branch statistics
// (branch_sq sums, weight-gradient norms) go to the context's DeviceStats, never to the host.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/gpu_branches.hpp"
#include "sim/placement.hpp"
#include "sim/stack_ops.hpp"

namespace normsim::gpu {

template <class R>
class GpuGraph final : public sim::StackOps {
 public:
  GpuGraph(const sim::StackShape& shape, const sim::Placement& placement, const GpuContext<R>& ctx);

  int batch() const override { return ctx_.S; }
  sim::Value norm(sim::Value x, sim::NormAt at) override;
  sim::Value add(sim::Value a, sim::Value b) override;
  sim::Value scale(sim::Value a, const sim::Scalars& s) override;
  using sim::StackOps::scale;
  sim::Value branch(int k, sim::Value u, bool qkv_norm) override;
  sim::Scalars mean_sq(sim::Value a) override;

  sim::Value input(DeviceBuffer<R> x);
  const R* value(sim::Value v) const { return values_[v.id].get(); }
  std::size_t value_size() const { return std::size_t(ctx_.S) * shape_.tokens * shape_.width; }
  // Frees the values the backward does not need; `keep` lists values the caller still wants to read.
  void release_forward(const std::vector<sim::Value>& keep);
  // Reverse pass from dLoss/d(out). on_grad(v, d_grad) is called for every value in `watch` once its
  // gradient is complete (zeros when the loss does not depend on it); the gradient is freed afterwards.
  void backward(sim::Value out, DeviceBuffer<R> dout, const std::vector<sim::Value>& watch,
                const std::function<void(int watch_index, const R* d_grad)>& on_grad);

 private:
  enum class Kind { input, norm, add, scale, branch };
  struct Op {
    Kind kind;
    int a = -1, b = -1;
    int k = -1;           // sublayer of a branch
    sim::NormAt at = {};  // a dyt or derf norm's alpha and shift
  };
  sim::Value push(Op op, DeviceBuffer<R> v);
  sim::PointwiseNorm pointwise(sim::NormAt at) const {
    return {shape_.norm, shape_.cfg.norm_gain, at.alpha, at.shift};
  }
  void accumulate(int id, const R* d_g, const double* d_scale);

  sim::StackShape shape_;
  const sim::Placement& placement_;
  GpuContext<R> ctx_;
  std::vector<Op> ops_;  // op i produced value i
  std::vector<DeviceBuffer<R>> values_, grads_;
  std::vector<DeviceBuffer<double>> aux_;  // per op: row rstd of a norm, per-sample factors of a scale
  std::vector<std::unique_ptr<GpuBranch<R>>> branches_;
};

}  // namespace normsim::gpu
