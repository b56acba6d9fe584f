// Per-sample dot products in double: one block per sample, or many (Tuning::spread_dot) with their partial
// sums added in a fixed order: the kernels and their launcher, declared with the reference in gpu/ops.hpp.
#include <algorithm>

#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"
#include "gpu/tuning.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void sample_dot_kernel(const R* a, const R* b, std::size_t n, double* out) {
  const std::size_t o = std::size_t(blockIdx.x) * n;
  double acc = 0;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) acc += double(a[o + i]) * double(b[o + i]);
  acc = block_sum(acc);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

// The spread version's partial sums (sample s, block j at s gridDim.y + j) and its count of finished blocks,
// which the last block resets. One launch at a time uses them: the backend launches on the legacy stream
// only, and one run at a time holds the device (gpu/device_handles.hpp's lock).
constexpr unsigned kDotPartials = 16384;
__device__ double dot_partials[kDotPartials];
__device__ unsigned int dot_finished = 0;

// Block (s, j) sums entries j blockDim.x + t, stepping gridDim.y blockDim.x, into its partial; the block that
// finishes last (every other's partial fenced before it counted itself) adds each sample's partials in the
// order j = 0, 1, ...: an order fixed by n alone, so the same bits from run to run and whatever the batch.
template <class R>
__global__ void sample_dot_spread_kernel(const R* a, const R* b, std::size_t n, double* out) {
  const unsigned S = gridDim.x, B = gridDim.y, s = blockIdx.x, j = blockIdx.y;
  const std::size_t o = std::size_t(s) * n;
  double acc = 0;
  for (std::size_t i = std::size_t(j) * blockDim.x + threadIdx.x; i < n; i += std::size_t(B) * blockDim.x)
    acc += double(a[o + i]) * double(b[o + i]);
  acc = block_sum(acc);
  if (threadIdx.x == 0) dot_partials[s * B + j] = acc;
  if (!last_block_to_finish(&dot_finished)) return;
  for (unsigned t = threadIdx.x; t < S; t += blockDim.x) {
    double sum = 0;
    for (unsigned q = 0; q < B; ++q) sum += __ldcg(dot_partials + t * B + q);  // at L2, past this SM's L1
    out[t] = sum;
  }
  if (threadIdx.x == 0) dot_finished = 0;
}

}  // namespace

template <class R>
void sample_dot(const R* d_a, const R* d_b, std::size_t n, int S, double* d_out) {
  if (S == 0) return;
  // Blocks a sample for the spread version from n alone, at most 256; 1: the one-block kernel.
  if (const unsigned B = tuning().spread_dot ? blocks_per_sample(n, 256) : 1; B > 1) {
    const int chunk = int(kDotPartials / B);  // samples a launch, so that their partials fit
    for (int first = 0; first < S; first += chunk) {
      const std::size_t o = std::size_t(first) * n;
      sample_dot_spread_kernel<<<dim3(unsigned(std::min(chunk, S - first)), B), kThreads>>>(d_a + o, d_b + o,
                                                                                            n, d_out + first);
      check_launch("sample_dot_spread_kernel");
    }
    return;
  }
  sample_dot_kernel<<<S, 1024>>>(d_a, d_b, n, d_out);
  check_launch("sample_dot_kernel");
}

NORMSIM_INSTANTIATE_OP(sample_dot)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
