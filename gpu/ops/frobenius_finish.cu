// ||A^T B||_F from its scaled sum and the two maxima: the kernel and its launcher, declared with its
// reference in gpu/stat_ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/stat_ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

__global__ void frobenius_finish_kernel(const double* max_a, const double* max_b, const double* sum, int S,
                                        double* out) {
  NORMSIM_GRID_LOOP(s, std::size_t(S)) out[s] = sim::scaled_frobenius(max_a[s], max_b[s], sum[s]);
}

}  // namespace

void frobenius_finish(const double* d_max_a, const double* d_max_b, const double* d_sum, int S,
                      double* d_out) {
  if (S == 0) return;
  frobenius_finish_kernel<<<grid_for(std::size_t(S)), kThreads>>>(d_max_a, d_max_b, d_sum, S, d_out);
  check_launch("frobenius_finish_kernel");
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
