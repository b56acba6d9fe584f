// The CUDA device of the MLP branch (sim/mlp_branch.hpp): a batch of S samples, the products shared with
// attention (gpu/gpu_projections.hpp), the activation and its backward one kernel each over the whole batch
// (gpu/ops.hpp: activation_*, swiglu_*).
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>

#include "gpu/gpu_projections.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
class GpuMlpDevice : public GpuProjections<R> {
  using GpuProjections<R>::s_;
  using GpuProjections<R>::w_;

 public:
  struct Hidden {
    DeviceBuffer<R> h, g;  // u W1 and, for SwiGLU, u Wgate (S x T x H)
  };

  GpuMlpDevice(const sim::StackShape& s, const sim::Placement& p, int k, const GpuContext<R>& ctx,
               std::uint32_t expert)
      : GpuProjections<R>(s, p, k, ctx, expert) {}

  bool swiglu() const { return s_.swiglu; }
  void release(Hidden& hid) {
    hid.h.reset();
    hid.g.reset();
    w_.release();
  }

  void project_activated(const R* u, sim::WeightKind w, Hidden& hid, DeviceBuffer<R>& a) {
    this->project(u, w, hid.h);
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
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
