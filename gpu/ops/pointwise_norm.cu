// DyT and Derf entry by entry, forward and backward: the kernel and its launcher, declared with its reference
// in gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void pointwise_norm_forward_kernel(const R* x, R* y, std::size_t n, sim::PointwiseNorm f) {
  NORMSIM_GRID_LOOP(i, n) y[i] = R(f(double(x[i])));
}

template <class R>
__global__ void pointwise_norm_backward_kernel(const R* x, const R* dy, R* dx, std::size_t n,
                                               sim::PointwiseNorm f, bool accumulate) {
  NORMSIM_GRID_LOOP(i, n) {
    const R v = R(double(dy[i]) * f.slope(double(x[i])));
    dx[i] = accumulate ? dx[i] + v : v;
  }
}

}  // namespace

template <class R>
void pointwise_norm_forward(const R* d_x, R* d_y, std::size_t n, sim::PointwiseNorm f) {
  pointwise_norm_forward_kernel<<<grid_for(n), kThreads>>>(d_x, d_y, n, f);
  check_launch("pointwise_norm_forward_kernel");
}

template <class R>
void pointwise_norm_backward(const R* d_x, const R* d_dy, R* d_dx, std::size_t n, sim::PointwiseNorm f,
                             bool accumulate) {
  pointwise_norm_backward_kernel<<<grid_for(n), kThreads>>>(d_x, d_dy, d_dx, n, f, accumulate);
  check_launch("pointwise_norm_backward_kernel");
}

NORMSIM_INSTANTIATE_OP(pointwise_norm_forward)
NORMSIM_INSTANTIATE_OP(pointwise_norm_backward)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
