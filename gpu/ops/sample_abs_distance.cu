// Per-sample sums of |a - b|: one block per sample: the kernel and its launcher, declared with its reference
// in gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void sample_abs_distance_kernel(const R* a, const R* b, std::size_t n, double* out) {
  const std::size_t o = std::size_t(blockIdx.x) * n;
  double acc = 0;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x)
    acc += fabs(double(a[o + i]) - (b ? double(b[o + i]) : 0.0));
  acc = block_sum(acc);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

}  // namespace

template <class R>
void sample_abs_distance(const R* d_a, const R* d_b, std::size_t n, int S, double* d_out) {
  if (S == 0) return;
  sample_abs_distance_kernel<<<S, 1024>>>(d_a, d_b, n, d_out);
  check_launch("sample_abs_distance_kernel");
}

NORMSIM_INSTANTIATE_OP(sample_abs_distance)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
