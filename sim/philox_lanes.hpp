// Philox4x32-10 (philox.hpp) of many consecutive blocks at once, for the CPU's bulk draws (draws.cpp):
// lane[w][j] is word w of block b0 + j of one keyed draw, exactly philox4x32_10's bits. With AVX-512 it
// runs 16 blocks per vector (philox16) and forms each 32 x 32 -> 64-bit product from two vpmuludq (even
// and odd lanes) instead of the 64-bit multiplies and permutes the compiler makes of the scalar code (half
// of the draws' time before); elsewhere, and for the last blocks, the scalar function block by block.
#pragma once
#include <cstddef>
#include <cstdint>

#include "sim/gaussian.hpp"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace normsim::sim {

#if defined(__AVX512F__)
namespace philox_detail {

// High and low 32 bits of m * x in every 32-bit lane of x. The even lanes' products sit in the 64-bit
// lanes of `even`, the odd lanes' in `odd`; one in-lane shuffle under a mask moves each half into place.
inline void mul_hi_lo(__m512i x, __m512i m, __m512i& hi, __m512i& lo) {
  const __m512i even = _mm512_mul_epu32(x, m);
  const __m512i odd = _mm512_mul_epu32(_mm512_srli_epi64(x, 32), m);
  hi = _mm512_mask_shuffle_epi32(odd, 0x5555, even, _MM_PERM_DDBB);  // even lanes: dwords 1, 3 of `even`
  lo = _mm512_mask_shuffle_epi32(even, 0xAAAA, odd, _MM_PERM_CCAA);  // odd lanes: dwords 0, 2 of `odd`
}

}  // namespace philox_detail

// The round keys of one draw, broadcast once per fill rather than once per 16 blocks.
struct PhiloxKey16 {
  __m512i round0[10], round1[10];
  explicit PhiloxKey16(const DrawKey& key) {
    std::uint32_t k0 = std::uint32_t(key.seed), k1 = std::uint32_t(key.seed >> 32);
    for (int r = 0; r < 10; ++r, k0 += 0x9E3779B9u, k1 += 0xBB67AE85u) {
      round0[r] = _mm512_set1_epi32(int(k0));
      round1[r] = _mm512_set1_epi32(int(k1));
    }
  }
};

// c[w] lane j = word w of block b + j of the draw `key` (rk its round keys), for j in [0, 16).
inline void philox16(const DrawKey& key, const PhiloxKey16& rk, std::uint32_t b, __m512i c[4]) {
  using philox_detail::mul_hi_lo;
  const __m512i m0 = _mm512_set1_epi32(int(0xD2511F53u)), m1 = _mm512_set1_epi32(int(0xCD9E8D57u));
  const __m512i step = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  __m512i c0 = _mm512_add_epi32(_mm512_set1_epi32(int(b)), step);
  __m512i c1 = _mm512_set1_epi32(int(static_cast<std::uint32_t>(key.stream)));
  __m512i c2 = _mm512_set1_epi32(int(key.layer)), c3 = _mm512_set1_epi32(int(key.sample));
  for (int round = 0; round < 10; ++round) {
    __m512i hi0, lo0, hi1, lo1;
    mul_hi_lo(c0, m0, hi0, lo0);
    mul_hi_lo(c2, m1, hi1, lo1);
    c0 = _mm512_ternarylogic_epi32(hi1, c1, rk.round0[round], 0x96);  // three-way xor
    c1 = lo1;
    c2 = _mm512_ternarylogic_epi32(hi0, c3, rk.round1[round], 0x96);
    c3 = lo0;
  }
  c[0] = c0, c[1] = c1, c[2] = c2, c[3] = c3;
}
#endif

// lane[0..3][j] for j in [0, nb): the four words of block b0 + j of the draw `key`.
inline void philox_lanes(const DrawKey& key, std::uint32_t b0, std::size_t nb, std::uint32_t* const lane[4]) {
  std::size_t j = 0;
#if defined(__AVX512F__)
  const PhiloxKey16 rk(key);
  for (; j + 16 <= nb; j += 16) {
    __m512i c[4];
    philox16(key, rk, b0 + std::uint32_t(j), c);
    for (int w = 0; w < 4; ++w) _mm512_storeu_si512(lane[w] + j, c[w]);
  }
#endif
  for (; j < nb; ++j) {
    const Philox4 r = philox4x32_10(philox_counter(b0 + std::uint32_t(j), key.stream, key.layer, key.sample),
                                    std::uint32_t(key.seed), std::uint32_t(key.seed >> 32));
    for (int w = 0; w < 4; ++w) lane[w][j] = r.v[w];
  }
}

}  // namespace normsim::sim
