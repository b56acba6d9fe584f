// Box-Muller (gaussian.hpp's box_muller4) on 16 Philox blocks held in AVX-512 registers, for the bulk draws
// (draws.cpp). It computes what draws.cpp's Eigen chunk path computes, operation for operation (the same
// products in the same order, Eigen's psqrt, Eigen's log and sin/cos as log16.hpp and sincos16.hpp restate
// them for the draws' inputs), so every entry has the same bits, without the six 512-entry arrays that
// path writes and reads back between its steps; tests/sim/test_draws_bits.cpp checks it.
#pragma once

#if defined(__AVX512F__)
#include <Eigen/Core>
#include <algorithm>
#include <cstddef>

#include "sim/log16.hpp"
#include "sim/philox_lanes.hpp"
#include "sim/sincos16.hpp"

namespace normsim::sim {

// uniform_open0 and kTwoPi * uniform_closed0 (gaussian.hpp) lane by lane: x >> 8 < 2^24 converts exactly.
inline __m512 uniform_open0_16(__m512i x) {
  const __m512i k = _mm512_add_epi32(_mm512_srli_epi32(x, 8), _mm512_set1_epi32(1));
  return _mm512_mul_ps(_mm512_cvtepi32_ps(k), _mm512_set1_ps(5.9604645e-08f));
}
inline __m512 angle16(__m512i x) {
  const __m512 u = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_srli_epi32(x, 8)), _mm512_set1_ps(5.9604645e-08f));
  return _mm512_mul_ps(_mm512_set1_ps(6.2831853071795864f), u);
}

// z[k] lane j = entry 4 j + k of the 16 blocks whose Philox words are c[0..3], times s.
inline void box_muller16(const __m512i c[4], float s, __m512 z[4]) {
  using namespace Eigen::internal;
  const Packet16f minus_two = pset1<Packet16f>(-2.0f), scale = pset1<Packet16f>(s);
  for (int pair = 0; pair < 2; ++pair) {
    const Packet16f u = uniform_open0_16(c[2 * pair]), t = angle16(c[2 * pair + 1]);
    const Packet16f r = pmul(psqrt(pmul(minus_two, plog_unit16(u))), scale);
    Packet16f sin_t, cos_t;
    psincos16(t, sin_t, cos_t);
    z[2 * pair] = pmul(r, cos_t);
    z[2 * pair + 1] = pmul(r, sin_t);
  }
}

// o[4 j + k] = z[k] lane j for j in [0, 16): the interleaving of the four outputs of each block, as two
// rounds of two-source permutes (pairs of floats, then pairs of pairs).
inline void interleave16(const __m512 z[4], __m512 out[4]) {
  const __m512i lo32 = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i hi32 = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
  const __m512i lo64 = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11);
  const __m512i hi64 = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
  const __m512d a_lo = _mm512_castps_pd(_mm512_permutex2var_ps(z[0], lo32, z[1]));
  const __m512d a_hi = _mm512_castps_pd(_mm512_permutex2var_ps(z[0], hi32, z[1]));
  const __m512d b_lo = _mm512_castps_pd(_mm512_permutex2var_ps(z[2], lo32, z[3]));
  const __m512d b_hi = _mm512_castps_pd(_mm512_permutex2var_ps(z[2], hi32, z[3]));
  out[0] = _mm512_castpd_ps(_mm512_permutex2var_pd(a_lo, lo64, b_lo));
  out[1] = _mm512_castpd_ps(_mm512_permutex2var_pd(a_lo, hi64, b_lo));
  out[2] = _mm512_castpd_ps(_mm512_permutex2var_pd(a_hi, lo64, b_hi));
  out[3] = _mm512_castpd_ps(_mm512_permutex2var_pd(a_hi, hi64, b_hi));
}

inline void store16(float* o, __m512 v) {
  _mm512_storeu_ps(o, v);
}
inline void store16(double* o, __m512 v) {
  _mm512_storeu_pd(o, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
  _mm512_storeu_pd(o + 8, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))));
}

// Groups g = 0 .. groups - 1 of 16 consecutive blocks of the draw `key` (round keys rk), group g starting
// at block b0 + g stride, times s: store(g, v) receives group g's 64 entries in order as v[0..3]. The
// Philox of the next group is issued beside the Box-Muller of the current one: two independent dependency
// chains, which the core overlaps (one alone leaves it waiting on latencies). Every entry is a function of
// its block alone, so a group drawn here has the bits it has in any other fill.
template <class Store>
void draw_groups16(const DrawKey& key, const PhiloxKey16& rk, float s, std::size_t b0, std::size_t stride,
                   std::size_t groups, Store store) {
  __m512i c[4], next[4];
  philox16(key, rk, std::uint32_t(b0), next);
  for (std::size_t g = 0; g < groups; ++g) {
    for (int w = 0; w < 4; ++w) c[w] = next[w];
    if (g + 1 < groups) philox16(key, rk, std::uint32_t(b0 + (g + 1) * stride), next);
    __m512 z[4], v[4];
    box_muller16(c, s, z);
    interleave16(z, v);
    store(g, v);
  }
}

// Entries 4 b0 .. 4 (b0 + nb) - 1 of the draw `key` (round keys rk), times s, into o[0 .. 4 nb).
template <class R>
void fill_blocks16(R* o, const DrawKey& key, const PhiloxKey16& rk, float s, std::size_t b0, std::size_t nb) {
  draw_groups16(key, rk, s, b0, 16, (nb + 15) / 16, [&](std::size_t g, const __m512 v[4]) {
    const std::size_t j = 16 * g;
    if (j + 16 <= nb) {
      for (int q = 0; q < 4; ++q) store16(o + 4 * j + 16 * q, v[q]);
    } else {  // the last, partial group of the fill
      alignas(64) R tmp[64];
      for (int q = 0; q < 4; ++q) store16(tmp + 16 * q, v[q]);
      std::copy_n(tmp, 4 * (nb - j), o + 4 * j);
    }
  });
}

}  // namespace normsim::sim
#endif
