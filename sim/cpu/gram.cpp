// The kernel of gram.hpp: tiles of 4 x 6 entries (rows i0.., j0..), j0 >= i0, each accumulating 16 lanes
// per entry along the rows, 10 vector loads per 24 multiply-adds. A core loads one 512-bit vector per cycle
// where it issues two multiply-adds (the project machine), so fewer loads per multiply-add is speed: 4 x 4
// tiles with GCC folding the second operand's load into every multiply-add (16 + 4 loads per 16) ran at
// 30-35 GFLOP/s on W1's shapes, these at 111-126 (one thread, /tmp measurements beside transpose +
// thin_gemm_awt's 98-132 for the whole Gram).
#if defined(__AVX512F__)
#include "sim/cpu/gram.hpp"

#include <immintrin.h>

#include <algorithm>

namespace normsim::sim {

namespace {

using Index = Eigen::Index;
constexpr int kTile = kGramTileRows;
constexpr int kTileJ = kGramTileCols;

// Entries (i0 + r, j0 + c), r < MI, c < MJ, of a a^T, into g (and mirrored). Inlined, as thin_gemm's
// tile, and its loops unrolled, so that GCC keeps the accumulators in registers: otherwise it stored them
// to the stack on every step.
template <int MI, int MJ>
[[gnu::always_inline]] inline void tile(float* g, Index ldg, const float* a, Index lda, Index n, Index i0,
                                        Index j0) {
  __m512 acc[MI][MJ];
  for (int r = 0; r < MI; ++r)
    for (int c = 0; c < MJ; ++c) acc[r][c] = _mm512_setzero_ps();
  const float* ai = a + i0 * lda;
  const float* aj = a + j0 * lda;
  const Index full = n & ~Index(15);
  for (Index k = 0; k < full; k += 16) {
    __m512 x[MI];
#pragma GCC unroll 4
    for (int r = 0; r < MI; ++r) x[r] = _mm512_loadu_ps(ai + r * lda + k);
#pragma GCC unroll 6
    for (int c = 0; c < MJ; ++c) {
      __m512 y = _mm512_loadu_ps(aj + c * lda + k);
      asm("" : "+v"(y));  // y in a register: one load for MI multiply-adds (GCC folded it into each)
#pragma GCC unroll 4
      for (int r = 0; r < MI; ++r) acc[r][c] = _mm512_fmadd_ps(x[r], y, acc[r][c]);
    }
  }
  if (full < n) {  // the rows' last piece, its missing lanes read as zeros: they add 0 * 0
    const __mmask16 m = __mmask16((1u << (n - full)) - 1u);
    __m512 x[MI];
    for (int r = 0; r < MI; ++r) x[r] = _mm512_maskz_loadu_ps(m, ai + r * lda + full);
    for (int c = 0; c < MJ; ++c) {
      const __m512 y = _mm512_maskz_loadu_ps(m, aj + c * lda + full);
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

// The tile at (i0, j0) of MI rows and min(rj, kTileJ) columns (rj >= 1 columns left).
template <int MI>
void tile_of(float* g, Index ldg, const float* a, Index lda, Index n, Index i0, Index j0, Index rj) {
  switch (rj) {
    case 1:
      return tile<MI, 1>(g, ldg, a, lda, n, i0, j0);
    case 2:
      return tile<MI, 2>(g, ldg, a, lda, n, i0, j0);
    case 3:
      return tile<MI, 3>(g, ldg, a, lda, n, i0, j0);
    case 4:
      return tile<MI, 4>(g, ldg, a, lda, n, i0, j0);
    case 5:
      return tile<MI, 5>(g, ldg, a, lda, n, i0, j0);
    default:
      return tile<MI, kTileJ>(g, ldg, a, lda, n, i0, j0);
  }
}

}  // namespace

void thin_gram(float* g, Index ldg, const float* a, Index lda, Index T, Index n) {
  for (Index i0 = 0; i0 < T; i0 += kTile)
    for (Index j0 = i0; j0 < T; j0 += kTileJ) {
      const Index ri = std::min<Index>(kTile, T - i0), rj = std::min<Index>(kTileJ, T - j0);
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
