// One SGD or Adam step of output_change's update: the kernel and its launcher, declared with its reference in
// gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void gradient_step_kernel(R* w, const R* g, std::size_t n, double lr, bool adam, double eps) {
  NORMSIM_GRID_LOOP(i, n) w[i] -= adam ? sim::adam_step(g[i], lr, eps) : sim::sgd_step(g[i], lr);
}

}  // namespace

template <class R>
void gradient_step(R* d_w, const R* d_g, std::size_t n, double lr, bool adam, double eps) {
  if (n == 0) return;
  gradient_step_kernel<<<grid_for(n), kThreads>>>(d_w, d_g, n, lr, adam, eps);
  check_launch("gradient_step_kernel");
}

NORMSIM_INSTANTIATE_OP(gradient_step)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
