// SwiGLU's gating, forward and backward: the kernel and its launcher, declared with its reference in
// gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void swiglu_forward_kernel(const R* g, const R* h, R* a, std::size_t n) {
  NORMSIM_GRID_LOOP(i, n) a[i] = sim::activate(sim::Activation::silu, g[i]) * h[i];
}

template <class R>
__global__ void swiglu_backward_kernel(const R* g, const R* h, const R* da, R* dg, R* dh, std::size_t n) {
  NORMSIM_GRID_LOOP(i, n) {
    const R d = da[i], hv = h[i], gv = g[i];
    dg[i] = d * hv * sim::activate_derivative(sim::Activation::silu, gv);
    dh[i] = d * sim::activate(sim::Activation::silu, gv);
  }
}

}  // namespace

template <class R>
void swiglu_forward(const R* d_g, const R* d_h, R* d_a, std::size_t n) {
  swiglu_forward_kernel<<<grid_for(n), kThreads>>>(d_g, d_h, d_a, n);
  check_launch("swiglu_forward_kernel");
}

template <class R>
void swiglu_backward(const R* d_g, const R* d_h, const R* d_da, R* d_dg, R* d_dh, std::size_t n) {
  swiglu_backward_kernel<<<grid_for(n), kThreads>>>(d_g, d_h, d_da, d_dg, d_dh, n);
  check_launch("swiglu_backward_kernel");
}

NORMSIM_INSTANTIATE_OP(swiglu_forward)
NORMSIM_INSTANTIATE_OP(swiglu_backward)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
