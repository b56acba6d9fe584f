// Out = [out +] a * s[sample] [+ b]: the kernel and its launcher, declared with its reference in gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void scaled_sum_kernel(R* out, const R* a, const double* s, const R* b, std::size_t n, int S,
                                  bool accumulate) {
  NORMSIM_GRID_LOOP(j, n * S) {
    R v = s ? R(a[j] * R(s[j / n])) : a[j];
    if (b) v += b[j];
    out[j] = accumulate ? out[j] + v : v;
  }
}

}  // namespace

template <class R>
void scaled_sum(R* d_out, const R* d_a, const double* d_s, const R* d_b, std::size_t n, int S,
                bool accumulate) {
  scaled_sum_kernel<<<grid_for(n * S), kThreads>>>(d_out, d_a, d_s, d_b, n, S, accumulate);
  check_launch("scaled_sum_kernel");
}

NORMSIM_INSTANTIATE_OP(scaled_sum)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
