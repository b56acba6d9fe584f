#include "sim/draws.hpp"

#include <algorithm>

namespace normsim::sim {

template <class R>
void fill_gaussian(R* out, std::size_t n, const DrawKey& key, double scale) {
  const std::uint32_t k0 = std::uint32_t(key.seed), k1 = std::uint32_t(key.seed >> 32);
  const float s = float(scale);
  // Blocks of 4 entries; the loop body is branch-free so the compiler vectorizes Philox and Box-Muller
  // (libmvec log/sin/cos under -fno-math-errno) across blocks.
  constexpr std::size_t kChunk = 256;
  alignas(64) float buf[4 * kChunk];
  const std::size_t blocks = (n + 3) / 4;
  for (std::size_t b0 = 0; b0 < blocks; b0 += kChunk) {
    const std::size_t nb = std::min(kChunk, blocks - b0);
#pragma omp simd
    for (std::size_t j = 0; j < nb; ++j) {
      const Philox4 r =
          philox4x32_10(philox_counter(std::uint32_t(b0 + j), key.stream, key.layer, key.sample), k0, k1);
      float z[4];
      box_muller4(r, z);
      buf[4 * j + 0] = z[0];
      buf[4 * j + 1] = z[1];
      buf[4 * j + 2] = z[2];
      buf[4 * j + 3] = z[3];
    }
    const std::size_t first = 4 * b0, count = std::min(4 * nb, n - first);
    for (std::size_t i = 0; i < count; ++i) out[first + i] = R(buf[i] * s);
  }
}

template void fill_gaussian<float>(float*, std::size_t, const DrawKey&, double);
template void fill_gaussian<double>(double*, std::size_t, const DrawKey&, double);

}  // namespace normsim::sim
