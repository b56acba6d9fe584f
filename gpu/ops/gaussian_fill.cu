// The weights' Gaussian draws, in R or straight into bf16 bits: the kernel and its launcher, declared with
// its reference in gpu/ops.hpp.
#include <cstdint>
#include <type_traits>

#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"
#include "gpu/tuning.hpp"

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

// The same values, where every sample's entries are whole Philox blocks (n % 4 == 0) and out is 16-byte
// aligned: a block's four entries go out in one store (16 bytes of float, two of 16 for double, 8 for bf16
// bits) instead of four, and the indices are 32-bit (blocks * S < 2^31, checked by the launcher, so that
// j plus the grid's stride, at most 2^29, cannot wrap).
// Tuning::vector_fill (gpu/tuning.hpp) chooses it.
template <class Out>
__device__ void store_block(Out* o, const float z[4], float scale) {
  if constexpr (std::is_same_v<Out, std::uint16_t>) {
    unsigned short q[4];
    for (int i = 0; i < 4; ++i)
      q[i] = (unsigned short)(sim::bf16_rounded_bits(__float_as_uint(z[i] * scale)) >> 16);
    *reinterpret_cast<ushort4*>(o) = make_ushort4(q[0], q[1], q[2], q[3]);
  } else if constexpr (std::is_same_v<Out, float>) {
    *reinterpret_cast<float4*>(o) = make_float4(z[0] * scale, z[1] * scale, z[2] * scale, z[3] * scale);
  } else {
    reinterpret_cast<double2*>(o)[0] = make_double2(double(z[0] * scale), double(z[1] * scale));
    reinterpret_cast<double2*>(o)[1] = make_double2(double(z[2] * scale), double(z[3] * scale));
  }
}

template <class Out>
__global__ void gaussian_fill_vector_kernel(Out* out, unsigned blocks, unsigned S,
                                            const std::uint32_t* samples, std::uint64_t seed,
                                            std::uint32_t layer, sim::Stream stream, float scale) {
  const unsigned total = blocks * S;
  for (unsigned j = blockIdx.x * blockDim.x + threadIdx.x; j < total; j += blockDim.x * gridDim.x) {
    const unsigned s = j / blocks, b = j - s * blocks;
    float z[4];
    sim::gaussian_block(sim::DrawKey{seed, samples[s], layer, stream}, b, z);
    store_block(out + 4 * std::size_t(j), z, scale);  // n = 4 blocks: entry 4 b of sample s is 4 j
  }
}

template <class Out>
void launch_gaussian_fill(Out* d_out, std::size_t n, int S, const std::uint32_t* d_samples,
                          std::uint64_t seed, std::uint32_t layer, sim::Stream stream, double scale) {
  const std::size_t blocks = (n + 3) / 4;
  if (tuning().vector_fill && n % 4 == 0 && reinterpret_cast<std::uintptr_t>(d_out) % 16 == 0 &&
      blocks * std::size_t(S) < (std::size_t(1) << 31)) {
    gaussian_fill_vector_kernel<<<grid_for(blocks * S), kThreads>>>(
        d_out, unsigned(blocks), unsigned(S), d_samples, seed, layer, stream, float(scale));
    check_launch("gaussian_fill_vector_kernel");
    return;
  }
  gaussian_fill_kernel<<<grid_for(blocks * S), kThreads>>>(d_out, n, S, d_samples, seed, layer, stream,
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
