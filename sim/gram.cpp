// The kernel of gram.hpp: tiles of 4 x 4 entries (rows i0.., j0..), j0 >= i0, each accumulating 16 lanes
// per entry over the rows' length, 8 vector loads per 16 multiply-adds.
#if defined(__AVX512F__)
#include "sim/gram.hpp"

#include <immintrin.h>

#include <algorithm>

namespace normsim::sim {

namespace {

using Index = Eigen::Index;
constexpr int kTile = 4;

// Entries (i0 + r, j0 + c), r < MI, c < MJ, of a a^T, into g. Inlined, as thin_gemm's tile, so that
// GCC keeps the accumulators in registers.
template <int MI, int MJ>
[[gnu::always_inline]] inline void tile(float* g, Index ldg, const float* a, Index lda, Index n, Index i0,
                                        Index j0) {
  __m512 acc[MI][MJ];
  for (int r = 0; r < MI; ++r)
    for (int c = 0; c < MJ; ++c) acc[r][c] = _mm512_setzero_ps();
  const float* ai = a + i0 * lda;
  const float* aj = a + j0 * lda;
  for (Index k = 0; k < n; k += 16) {
    // The last piece of a row shorter than 16 is read with its missing lanes as zeros: they add 0 * 0.
    const __mmask16 m = n - k >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (n - k)) - 1u);
    __m512 x[MI];
    for (int r = 0; r < MI; ++r) x[r] = _mm512_maskz_loadu_ps(m, ai + r * lda + k);
    for (int c = 0; c < MJ; ++c) {
      const __m512 y = _mm512_maskz_loadu_ps(m, aj + c * lda + k);
      for (int r = 0; r < MI; ++r) acc[r][c] = _mm512_fmadd_ps(x[r], y, acc[r][c]);
    }
  }
  for (int r = 0; r < MI; ++r)
    for (int c = 0; c < MJ; ++c) {
      const float v = _mm512_reduce_add_ps(acc[r][c]);
      g[(i0 + r) * ldg + j0 + c] = v;
      g[(j0 + c) * ldg + i0 + r] = v;
    }
}

// The tile at (i0, j0) of MI rows and min(rj, kTile) columns (rj >= 1 columns left).
template <int MI>
void tile_of(float* g, Index ldg, const float* a, Index lda, Index n, Index i0, Index j0, Index rj) {
  switch (rj) {
    case 1:
      return tile<MI, 1>(g, ldg, a, lda, n, i0, j0);
    case 2:
      return tile<MI, 2>(g, ldg, a, lda, n, i0, j0);
    case 3:
      return tile<MI, 3>(g, ldg, a, lda, n, i0, j0);
    default:
      return tile<MI, kTile>(g, ldg, a, lda, n, i0, j0);
  }
}

}  // namespace

void thin_gram(float* g, Index ldg, const float* a, Index lda, Index T, Index n) {
  for (Index i0 = 0; i0 < T; i0 += kTile)
    for (Index j0 = i0; j0 < T; j0 += kTile) {
      const Index ri = std::min<Index>(kTile, T - i0), rj = std::min<Index>(kTile, T - j0);
      switch (ri) {
        case 1:
          tile_of<1>(g, ldg, a, lda, n, i0, j0, rj);
          break;
        case 2:
          tile_of<2>(g, ldg, a, lda, n, i0, j0, rj);
          break;
        case 3:
          tile_of<3>(g, ldg, a, lda, n, i0, j0, rj);
          break;
        default:
          tile_of<kTile>(g, ldg, a, lda, n, i0, j0, rj);
          break;
      }
    }
}

}  // namespace normsim::sim
#endif
