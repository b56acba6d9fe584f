// Per-sample max |a| and the power-of-two scales taken from it (the Frobenius norms' scaling): the kernel and
// its launcher, declared with its reference in gpu/ops.hpp.

#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// Blocks (blockIdx.x the sample, gridDim.y per sample) over slices of a sample, merged into out[s] by an
// atomicMax on block_max_abs_bits (gpu/device_common.cuh): exact, the twin's whatever the grid.
template <class R>
__global__ void sample_max_abs_kernel(const R* a, std::size_t n, unsigned long long* out) {
  const unsigned long long bits =
      block_max_abs_bits(a + std::size_t(blockIdx.x) * n, std::size_t(blockIdx.y) * blockDim.x + threadIdx.x,
                         n, std::size_t(blockDim.x) * gridDim.y);
  if (threadIdx.x == 0) atomicMax(out + blockIdx.x, bits);
}

__global__ void power_of_two_scales_kernel(const double* max_abs, double* factor, int S) {
  NORMSIM_GRID_LOOP(s, std::size_t(S)) factor[s] = sim::power_of_two_scale(max_abs[s]);
}

}  // namespace

// Enough blocks per sample to fill the device (about 16 entries a thread, at most 1024 blocks a sample): one
// block per sample (the first version) read W1's 32 K-entry slices from 4 of 132 SMs at 40 us a call.
template <class R>
void sample_max_abs(const R* d_a, std::size_t n, int S, double* d_out) {
  if (S == 0) return;
  NORMSIM_CUDA_CHECK(cudaMemsetAsync(d_out, 0, std::size_t(S) * sizeof(double), cudaStreamLegacy));
  sample_max_abs_kernel<<<dim3(unsigned(S), blocks_per_sample(n, 1024)), kThreads>>>(
      d_a, n, reinterpret_cast<unsigned long long*>(d_out));
  check_launch("sample_max_abs_kernel");
}

void power_of_two_scales(const double* d_max_abs, double* d_factor, int S) {
  if (S == 0) return;
  power_of_two_scales_kernel<<<grid_for(std::size_t(S)), kThreads>>>(d_max_abs, d_factor, S);
  check_launch("power_of_two_scales_kernel");
}

NORMSIM_INSTANTIATE_OP(sample_max_abs)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
