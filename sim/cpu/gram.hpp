// The float32 Gram matrix G = A A^T of a thin row-major matrix (T tokens x n), as the weight-gradient
// norms need it (frobenius_of_AtB in sim/cpu/frobenius.hpp: ||A^T B||_F^2 = <A A^T, B B^T>_F). Eigen's GEMM
// packs A into panels and forms all T^2 entries; here entry (i, j) is a dot product of rows i and j read
// in place: 16 lanes of fused multiply-adds along the row, k ascending within a lane, then the lanes added
// in one fixed order. An entry's bits therefore depend on its two rows alone (not on T, the tile or the
// thread), G is exactly symmetric, and only the tiles on or above the diagonal are computed (mirrored
// below): T (T + 1) / 2 dot products and the few below the diagonal that its tiles share
// (thin_gram_dot_products: 2176 for T = 64) instead of T^2. Built with AVX-512 only (has_thin_gemm).
#pragma once
#include <Eigen/Core>
#include <algorithm>

namespace normsim::sim {

// The tiles: kGramTileRows rows i0.. by kGramTileCols rows j0.., j0 from i0 on.
inline constexpr int kGramTileRows = 4, kGramTileCols = 6;

// The dot products thin_gram computes for T rows (what a benchmark counts as its arithmetic, 2 n each).
constexpr double thin_gram_dot_products(Eigen::Index T) {
  double count = 0;
  for (Eigen::Index i0 = 0; i0 < T; i0 += kGramTileRows)
    for (Eigen::Index j0 = i0; j0 < T; j0 += kGramTileCols)
      count += double(std::min<Eigen::Index>(kGramTileRows, T - i0) *
                      std::min<Eigen::Index>(kGramTileCols, T - j0));
  return count;
}

// g (T x T, row stride ldg) = a a^T for a (T x n, row stride lda).
void thin_gram(float* g, Eigen::Index ldg, const float* a, Eigen::Index lda, Eigen::Index T, Eigen::Index n);

}  // namespace normsim::sim
