// An MLP's activation, forward and backward: the kernel and its launcher, declared with its reference in
// gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void activation_forward_kernel(const R* h, R* a, std::size_t n, sim::Activation act) {
  NORMSIM_GRID_LOOP(i, n) a[i] = sim::activate(act, h[i]);
}

template <class R>
__global__ void activation_backward_kernel(const R* h, const R* da, R* dh, std::size_t n,
                                           sim::Activation act) {
  NORMSIM_GRID_LOOP(i, n) dh[i] = da[i] * sim::activate_derivative(act, h[i]);
}

}  // namespace

template <class R>
void activation_forward(const R* d_h, R* d_a, std::size_t n, sim::Activation act) {
  activation_forward_kernel<<<grid_for(n), kThreads>>>(d_h, d_a, n, act);
  check_launch("activation_forward_kernel");
}

template <class R>
void activation_backward(const R* d_h, const R* d_da, R* d_dh, std::size_t n, sim::Activation act) {
  activation_backward_kernel<<<grid_for(n), kThreads>>>(d_h, d_da, d_dh, n, act);
  check_launch("activation_backward_kernel");
}

NORMSIM_INSTANTIATE_OP(activation_forward)
NORMSIM_INSTANTIATE_OP(activation_backward)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
