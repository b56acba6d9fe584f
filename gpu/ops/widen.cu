// A stream widened to double, with or without a per-sample scale: the kernel and its launcher, declared with
// its reference in gpu/stat_ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/stat_ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// With `factor`, entry i of sample i / per scaled in R first, as scaled_sum (gpu/ops/scaled_sum.cu) scales.
template <class R>
__global__ void widen_kernel(const R* x, const double* factor, std::size_t per, std::size_t n, double* out) {
  NORMSIM_GRID_LOOP(i, n) out[i] = factor ? double(R(x[i] * R(factor[i / per]))) : double(x[i]);
}

}  // namespace

template <class R>
void widen(const R* d_x, std::size_t n, double* d_out) {
  if (n == 0) return;
  widen_kernel<<<grid_for(n), kThreads>>>(d_x, static_cast<const double*>(nullptr), n, n, d_out);
  check_launch("widen_kernel");
}

template <class R>
void scaled_widen(const R* d_x, const double* d_factor, std::size_t n, int S, double* d_out) {
  if (n == 0 || S == 0) return;
  widen_kernel<<<grid_for(n * S), kThreads>>>(d_x, d_factor, n, n * S, d_out);
  check_launch("widen_kernel");
}

NORMSIM_INSTANTIATE_OP(widen)
NORMSIM_INSTANTIATE_OP(scaled_widen)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
