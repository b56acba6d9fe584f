// The bf16 rounding of float entries: the kernel and its launcher, declared with its reference in
// gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

__global__ void round_to_bf16_kernel(const float* x, float* rounded, std::uint16_t* bits, std::size_t n) {
  NORMSIM_GRID_LOOP(i, n) {
    const std::uint32_t u = sim::bf16_rounded_bits(__float_as_uint(x[i]));
    if (rounded) rounded[i] = __uint_as_float(u);
    if (bits) bits[i] = std::uint16_t(u >> 16);
  }
}

}  // namespace

void round_to_bf16(const float* d_x, float* d_rounded, std::uint16_t* d_bits, std::size_t n) {
  round_to_bf16_kernel<<<grid_for(n), kThreads>>>(d_x, d_rounded, d_bits, n);
  check_launch("round_to_bf16_kernel");
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
