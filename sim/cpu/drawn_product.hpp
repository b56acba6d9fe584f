// The forward's product u W with W drawn as thin_gemm reads it. thin_gemm's A W fills a small strip buffer
// (256 rows x 64 columns of W) before each row of tiles (thin_gemm.hpp); here the strip is drawn straight
// into that buffer, and also stored where the weight is kept for the backward, instead of the whole W being
// drawn into memory and then read back from it: W1's weights (4 MB each, fresh from the draw) were read back
// from L3 by the strip copy. Every entry of W is the draw's entry (draws are per Philox block, so a strip
// has the bits fill_gaussian gives it) and the product is thin_gemm_aw's, so out, and the kept W, have the
// same bits as drawing W whole and multiplying (tests/cpu/test_drawn_product.cpp).
#pragma once
#include <Eigen/Core>
#include <stdexcept>

#include "sim/cpu/cpu_parallel.hpp"
#include "sim/gaussian.hpp"

namespace normsim::sim {

// Whether a weight of fan_out columns can be drawn strip by strip: built with thin_gemm, and fan_out a
// multiple of 64, so every strip of every column block is whole and each of its rows is 16 Philox blocks.
constexpr bool drawn_product_fits(Eigen::Index fan_out) {
  return has_thin_gemm && fan_out % 64 == 0;
}

// Columns [col0, col0 + n) of C = A W into c (C's column col0 first, row stride ldc): A (T x k, lda), W
// (k x cols) entry (i, j) = entry i cols + j of the draw `key` times `scale`, drawn strip by strip; each
// strip also stored into keep (k x cols, row-major) where keep is not null. col0 and n multiples of 64.
void thin_gemm_aw_drawn(float* c, Eigen::Index ldc, const float* a, Eigen::Index lda, const DrawKey& key,
                        float scale, Eigen::Index cols, Eigen::Index col0, Eigen::Index T, Eigen::Index k,
                        Eigen::Index n, float* keep);

// c = a W, W (a.cols() x cols) the draw `key` times `scale`, kept in *keep where keep is not null; split
// into product_by_columns's column blocks across `threads`, and after(first, count) run on each finished
// block as there. Needs drawn_product_fits(cols).
template <class After>
void drawn_product(Mat<float>& c, const Mat<float>& a, const DrawKey& key, double scale, Eigen::Index cols,
                   Mat<float>* keep, int threads, After after) {
  // The strips' draws assume whole 64-column strips (DrawnStrips::fill); a caller that skipped
  // drawn_product_fits would write past keep's rows.
  if (!drawn_product_fits(cols))
    throw std::invalid_argument("drawn_product: the weight's columns are not whole strips");
  c.resize(a.rows(), cols);
  if (keep) keep->resize(a.cols(), cols);
  // The product, and the draw at fill_gaussian's estimate of 16 operations an entry.
  const double work =
      2.0 * double(a.rows()) * double(a.cols()) * double(cols) + 16.0 * double(a.cols()) * double(cols);
  for_column_blocks(cols, work, threads, [&](Eigen::Index first, Eigen::Index count) {
    thin_gemm_aw_drawn(c.data() + first, c.cols(), a.data(), a.cols(), key, float(scale), cols, first,
                       a.rows(), a.cols(), count, keep ? keep->data() : nullptr);
    after(first, count);
  });
}

}  // namespace normsim::sim
