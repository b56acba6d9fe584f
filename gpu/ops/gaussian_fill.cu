// The weights' Gaussian draws, in R or straight into bf16 bits: the kernel and its launcher, declared with
// its reference in gpu/ops.hpp.
#include <cstdint>
#include <type_traits>

#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// One thread per Philox block: its four normals are computed once and written to the (up to) four entries
// they are (gaussian_at would compute the block once per entry). Out std::uint16_t: each entry's bf16 bits,
// rounded from the float32 that a float fill writes (sim::bf16_rounded_bits), so the same bits as
// gaussian_fill<float> followed by round_to_bf16, without the float32 pass.
template <class Out>
__global__ void gaussian_fill_kernel(Out* out, std::size_t n, int S, const std::uint32_t* samples,
                                     std::uint64_t seed, std::uint32_t layer, sim::Stream stream,
                                     float scale) {
  const std::size_t blocks = (n + 3) / 4;
  NORMSIM_GRID_LOOP(j, blocks * S) {
    const std::size_t s = j / blocks, b = j % blocks;
    float z[4];
    sim::gaussian_block(sim::DrawKey{seed, samples[s], layer, stream}, std::uint32_t(b), z);
    Out* o = out + s * n + 4 * b;
    for (std::size_t q = 0; q < 4 && 4 * b + q < n; ++q) {
      if constexpr (std::is_same_v<Out, std::uint16_t>)
        o[q] = Out(sim::bf16_rounded_bits(__float_as_uint(z[q] * scale)) >> 16);
      else
        o[q] = Out(z[q] * scale);
    }
  }
}

template <class Out>
void launch_gaussian_fill(Out* d_out, std::size_t n, int S, const std::uint32_t* d_samples,
                          std::uint64_t seed, std::uint32_t layer, sim::Stream stream, double scale) {
  gaussian_fill_kernel<<<grid_for((n + 3) / 4 * S), kThreads>>>(d_out, n, S, d_samples, seed, layer, stream,
                                                                float(scale));
  check_launch("gaussian_fill_kernel");
}

}  // namespace

template <class R>
void gaussian_fill(R* d_out, std::size_t n, int S, const std::uint32_t* d_samples, std::uint64_t seed,
                   std::uint32_t layer, sim::Stream stream, double scale) {
  launch_gaussian_fill(d_out, n, S, d_samples, seed, layer, stream, scale);
}

void gaussian_fill_bf16(std::uint16_t* d_bits, std::size_t n, int S, const std::uint32_t* d_samples,
                        std::uint64_t seed, std::uint32_t layer, sim::Stream stream, double scale) {
  launch_gaussian_fill(d_bits, n, S, d_samples, seed, layer, stream, scale);
}

NORMSIM_INSTANTIATE_OP(gaussian_fill)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
