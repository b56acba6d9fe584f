// The bulk draws' bits are pinned: golden digests and the CUDA agreement rest on them. fill_gaussian (with
// AVX-512: Philox and Box-Muller in registers, sim/box_muller16.hpp) must equal, bit for bit, the chunk
// algorithm it replaced, kept below as the reference (sim/draws.cpp as of commit b79c6de, its Philox
// lanes written as the scalar philox4x32_10). With AVX-512 the register kernels' parts are also compared
// with Eigen's own functions on every input the draws can produce.
// GCC 12 flags its own avx512fintrin.h (inlined from Eigen's vectorized sin/cos) as reading an
// uninitialized variable: a known false positive (GCC bug 105593), as in sim/draws.cpp.
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "sim/box_muller16.hpp"
#include "sim/draws.hpp"
#include "sim/gaussian.hpp"

using namespace normsim::sim;

namespace {

// Entries 0 .. n-1 of the draw, as sim/draws.cpp computed them before: chunks of 512 blocks, Eigen's
// vectorized log, sqrt, sin and cos over arrays, and the scalar std::sin/cos for a chunk holding the end
// of a fill whose size is not a multiple of 4.
template <class R>
void reference_fill(R* out, std::size_t n, const DrawKey& key, float s) {
  constexpr std::size_t kChunk = 512;
  std::vector<std::uint32_t> lane[4];
  for (auto& l : lane) l.assign(kChunk, 0);
  Eigen::Array<float, Eigen::Dynamic, 1> u1(kChunk), t1(kChunk), u2(kChunk), t2(kChunk), r1(kChunk),
      r2(kChunk);
  const std::size_t blocks = (n + 3) / 4;
  for (std::size_t b0 = 0; b0 < blocks; b0 += kChunk) {
    const std::size_t nb = std::min(kChunk, blocks - b0);
    for (std::size_t j = 0; j < nb; ++j) {
      const Philox4 r =
          philox4x32_10(philox_counter(std::uint32_t(b0 + j), key.stream, key.layer, key.sample),
                        std::uint32_t(key.seed), std::uint32_t(key.seed >> 32));
      for (int w = 0; w < 4; ++w) lane[w][j] = r.v[w];
    }
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

// fill_gaussian on `threads` equals the reference bit for bit and writes nothing past n.
template <class R>
bool same_bits(const DrawKey& key, std::size_t n, double scale, int threads) {
  std::vector<R> want(n + 1, R(-7)), got(n + 1, R(-7));
  reference_fill(want.data(), n, key, float(scale));
  fill_gaussian(got.data(), n, key, scale, threads);
  return std::memcmp(want.data(), got.data(), (n + 1) * sizeof(R)) == 0;
}

}  // namespace

// Sizes: 0 to 9 (partial blocks), around a 16-block vector (64) and a 512-block chunk (2048), several
// chunks with each remainder mod 4, and above 2^16 entries, where fill_gaussian splits across 2 threads.
TEST_CASE("fill_gaussian keeps the bits of the Eigen chunk algorithm", "[draws]") {
  const std::size_t sizes[] = {0,    1,    2,    3,    4,    5,    6,     7,     8,     9,      63,
                               64,   65,   66,   67,   2047, 2048, 2049,  2050,  2051,  4096,   4099,
                               6142, 6143, 6144, 6145, 8195, 8196, 65537, 65538, 65540, 204803, 204804};
  for (std::uint32_t k = 0; k < 12; ++k) {
    const DrawKey key{0x9E3779B97F4A7C15ull * (k + 1), 3 * k, 7 * k + 1, Stream(k % 11)};
    const double scale = (k % 3 == 0) ? 1.0 : (k % 3 == 1) ? 0.0441941738241592 : 2.5;
    for (const std::size_t n : sizes)
      for (const int threads : {1, 2}) {
        INFO("key " << k << ", n " << n << ", threads " << threads);
        REQUIRE(same_bits<float>(key, n, scale, threads));
        REQUIRE(same_bits<double>(key, n, scale, threads));
      }
  }
}

#if defined(__AVX512F__)
namespace {

// Lanes of 16 consecutive 24-bit values k0 .. k0 + 15, placed where the draws take them (bits 8..31).
__m512i philox_words(std::uint32_t k0) {
  const __m512i k = _mm512_add_epi32(_mm512_set1_epi32(int(k0)),
                                     _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
  return _mm512_slli_epi32(k, 8);
}

int lanes_differing(__m512 a, __m512 b) {
  return __builtin_popcount(_mm512_cmpneq_epi32_mask(_mm512_castps_si512(a), _mm512_castps_si512(b)));
}

}  // namespace

// Every u the draws form, k 2^-24 for k = 1 .. 2^24.
TEST_CASE("plog_unit16 equals Eigen's plog on every uniform of the draws", "[draws]") {
  int differing = 0;
  for (std::uint32_t k0 = 0; k0 < (1u << 24); k0 += 16) {
    const __m512 u = uniform_open0_16(philox_words(k0));
    differing += lanes_differing(plog_unit16(u), Eigen::internal::plog(u));
  }
  REQUIRE(differing == 0);
}

// Every angle the draws form, 2 pi k 2^-24 for k = 0 .. 2^24 - 1.
TEST_CASE("psincos16 equals Eigen's psin and pcos on every angle of the draws", "[draws]") {
  int differing_sin = 0, differing_cos = 0;
  for (std::uint32_t k0 = 0; k0 < (1u << 24); k0 += 16) {
    const __m512 t = angle16(philox_words(k0));
    __m512 sin_t, cos_t;
    psincos16(t, sin_t, cos_t);
    differing_sin += lanes_differing(sin_t, Eigen::internal::psin(t));
    differing_cos += lanes_differing(cos_t, Eigen::internal::pcos(t));
  }
  REQUIRE(differing_sin == 0);
  REQUIRE(differing_cos == 0);
}
#endif
