// GCC 12 flags its own avx512fintrin.h (inlined from Eigen's vectorized sin/cos) as reading an
// uninitialized variable: a known false positive (GCC bug 105593), silenced for this file only.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "sim/draws.hpp"
#include "sim/thread_split.hpp"

#include "sim/box_muller16.hpp"
#include "sim/philox_lanes.hpp"

#include <Eigen/Core>
#include <algorithm>

namespace normsim::sim {

namespace {

// Chunks of 4 * kChunk entries: Philox into four lanes (philox_lanes.hpp), then
// Box-Muller with Eigen's vectorized log/sin/cos. Those agree with the scalar gaussian_at() (used by
// CUDA kernels) to a few float ulps, not bit for bit; tests/sim/test_philox.cpp states the bound.
// Entry i depends on i alone: the chunk grid is fixed by n, whichever thread fills a chunk.
// With AVX-512, box_muller16.hpp computes the same bits in registers; this Eigen path then fills only
// the last chunk of a fill whose size is not a multiple of 4 (its scalar std::sin/cos are kept as they
// were, so that no entry changes). tests/sim/test_draws_bits.cpp pins the bits of both.
constexpr std::size_t kChunk = 512;

// Blocks b0 .. b1 - 1 (b0 at a chunk start) by the Eigen path.
template <class R>
void fill_chunks_eigen(R* out, std::size_t n, const DrawKey& key, float s, std::size_t b0, std::size_t b1) {
  alignas(64) std::uint32_t lane[4][kChunk];
  std::uint32_t* const lanes[4] = {lane[0], lane[1], lane[2], lane[3]};
  Eigen::Array<float, Eigen::Dynamic, 1> u1(kChunk), t1(kChunk), u2(kChunk), t2(kChunk), r1(kChunk),
      r2(kChunk);
  for (; b0 < b1; b0 += kChunk) {
    const std::size_t nb = std::min(kChunk, b1 - b0);
    philox_lanes(key, std::uint32_t(b0), nb, lanes);
    for (std::size_t j = 0; j < nb; ++j) {
      u1[j] = uniform_open0(lane[0][j]);
      t1[j] = 6.2831853071795864f * uniform_closed0(lane[1][j]);
      u2[j] = uniform_open0(lane[2][j]);
      t2[j] = 6.2831853071795864f * uniform_closed0(lane[3][j]);
    }
    r1 = (-2.0f * u1.log()).sqrt() * s;
    r2 = (-2.0f * u2.log()).sqrt() * s;
    const std::size_t first = 4 * b0, count = std::min(4 * nb, n - first);
    R* o = out + first;
    if (count == 4 * nb) {
      const auto c1 = (r1 * t1.cos()).eval(), s1 = (r1 * t1.sin()).eval();
      const auto c2 = (r2 * t2.cos()).eval(), s2 = (r2 * t2.sin()).eval();
      for (std::size_t j = 0; j < nb; ++j) {
        o[4 * j + 0] = R(c1[j]);
        o[4 * j + 1] = R(s1[j]);
        o[4 * j + 2] = R(c2[j]);
        o[4 * j + 3] = R(s2[j]);
      }
    } else {
      for (std::size_t i = 0; i < count; ++i) {
        const std::size_t j = i / 4;
        const float v = (i % 4 == 0)   ? r1[j] * std::cos(t1[j])
                        : (i % 4 == 1) ? r1[j] * std::sin(t1[j])
                        : (i % 4 == 2) ? r2[j] * std::cos(t2[j])
                                       : r2[j] * std::sin(t2[j]);
        o[i] = R(v);
      }
    }
  }
}

template <class R>
void fill_chunks(R* out, std::size_t n, const DrawKey& key, float s, std::size_t chunk0, std::size_t chunk1) {
  const std::size_t blocks = (n + 3) / 4, b1 = std::min(blocks, chunk1 * kChunk);
  std::size_t b0 = chunk0 * kChunk;
#if defined(__AVX512F__)
  // Every block in registers but those of the last chunk of a fill whose size is not a multiple of 4.
  const std::size_t eigen_from = n % 4 == 0 ? blocks : (blocks - 1) / kChunk * kChunk;
  const std::size_t fast_end = std::min(b1, eigen_from);
  if (b0 < fast_end) fill_blocks16(out + 4 * b0, key, PhiloxKey16(key), s, b0, fast_end - b0);
  b0 = std::max(b0, fast_end);
#endif
  if (b0 < b1) fill_chunks_eigen(out, n, key, s, b0, b1);
}

}  // namespace

template <class R>
void fill_gaussian(R* out, std::size_t n, const DrawKey& key, double scale, int threads) {
  const std::size_t chunks = ((n + 3) / 4 + kChunk - 1) / kChunk;
  for_each_run(chunks, 16.0 * double(n), threads, [&](std::size_t first, std::size_t last) {
    fill_chunks(out, n, key, float(scale), first, last);
  });
}

template void fill_gaussian<float>(float*, std::size_t, const DrawKey&, double, int);
template void fill_gaussian<double>(double*, std::size_t, const DrawKey&, double, int);

}  // namespace normsim::sim
