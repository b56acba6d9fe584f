// The Frobenius norms' operand scales in one launch (Tuning::fused_scales): per sample max |A|, max |B| and
// their power-of-two factors, which sample_max_abs twice and power_of_two_scales take three launches for.
// The kernel and its launcher, declared with its reference in gpu/ops.hpp.
#include <algorithm>

#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// How many blocks of the grid have finished (last_block_to_finish); the last one resets it. One launch at a
// time uses it: the backend launches on the legacy stream only, and one run at a time holds the device
// (gpu/device_handles.hpp's lock).
__device__ unsigned int operand_scales_finished = 0;

// Block (s, y, z): slice y of sample s of a (z = 0) or b (z = 1), merged into max_ab[z S + s] by an
// atomicMax on block_max_abs_bits (exact whatever the grid, as sample_max_abs). The block that finishes
// last, which every other block's maximum has reached (each fences before it counts itself), turns the 2S
// maxima into their factors.
template <class R>
__global__ void operand_scales_kernel(const R* a, std::size_t n, const R* b, std::size_t m, double* max_ab,
                                      double* factor) {
  const int S = int(gridDim.x), s = int(blockIdx.x);
  const R* x = blockIdx.z == 0 ? a + std::size_t(s) * n : b + std::size_t(s) * m;
  const std::size_t len = blockIdx.z == 0 ? n : m;
  const unsigned long long bits = block_max_abs_bits(x, std::size_t(blockIdx.y) * blockDim.x + threadIdx.x,
                                                     len, std::size_t(blockDim.x) * gridDim.y);
  unsigned long long* const out = reinterpret_cast<unsigned long long*>(max_ab);
  if (threadIdx.x == 0) atomicMax(out + blockIdx.z * S + s, bits);
  if (!last_block_to_finish(&operand_scales_finished)) return;
  for (int i = int(threadIdx.x); i < 2 * S; i += int(blockDim.x))  // read at L2, where the atomics act
    factor[i] = sim::power_of_two_scale(__longlong_as_double((long long)atomicAdd(out + i, 0ull)));
  if (threadIdx.x == 0) operand_scales_finished = 0;
}

}  // namespace

// Blocks per sample and operand as sample_max_abs (about 16 entries a thread, at most 1024), for the longer
// operand; the shorter one's surplus blocks see no entry and add +0.
template <class R>
void operand_scales(const R* d_a, std::size_t n, const R* d_b, std::size_t m, int S, double* d_max_ab,
                    double* d_factor) {
  if (S == 0) return;
  NORMSIM_CUDA_CHECK(cudaMemsetAsync(d_max_ab, 0, 2 * std::size_t(S) * sizeof(double), cudaStreamLegacy));
  operand_scales_kernel<<<dim3(unsigned(S), blocks_per_sample(std::max(n, m), 1024), 2), kThreads>>>(
      d_a, n, d_b, m, d_max_ab, d_factor);
  check_launch("operand_scales_kernel");
}

NORMSIM_INSTANTIATE_OP(operand_scales)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
