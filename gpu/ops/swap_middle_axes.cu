// The middle axes of S x A x B x n swapped (attention's heads split and merged): the kernel and its launcher,
// declared with its reference in gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void swap_middle_axes_kernel(R* dst, const R* src, int A, int B, int n, std::size_t total) {
  NORMSIM_GRID_LOOP(i, total) {  // i indexes src (s, a, b, j): coalesced reads, runs of n contiguous writes
    const std::size_t j = i % n, r = i / n, b = r % B, a = (r / B) % A, s = r / (std::size_t(B) * A);
    dst[((s * B + b) * A + a) * n + j] = src[i];
  }
}

}  // namespace

template <class R>
void swap_middle_axes(const R* d_src, R* d_dst, int S, int A, int B, int n) {
  const std::size_t total = std::size_t(S) * A * B * n;
  if (total == 0) return;
  swap_middle_axes_kernel<<<grid_for(total), kThreads>>>(d_dst, d_src, A, B, n, total);
  check_launch("swap_middle_axes_kernel");
}

NORMSIM_INSTANTIATE_OP(swap_middle_axes)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
