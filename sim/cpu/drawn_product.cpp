// thin_gemm_aw_drawn (drawn_product.hpp): thin_gemm's A W with a WeightStrips that draws.
// GCC 12 flags its own avx512fintrin.h, inlined from the Philox rounds, as reading an uninitialized
// variable: a known false positive (GCC bug 105593), silenced for this file only, as in draws.cpp.
#pragma GCC diagnostic ignored "-Wuninitialized"
#if defined(__AVX512F__)
#include "sim/cpu/drawn_product.hpp"

#include <immintrin.h>

#include <cstddef>

#include "sim/box_muller16.hpp"

namespace normsim::sim {

namespace {

using Index = Eigen::Index;

// The strips of W (k x cols, the draw `key` times `scale`) within the column block starting at col0: row
// k0 + g of a strip is the 16 blocks from (k0 + g) cols + col0 + p0, so a strip is kc groups of
// draw_groups16 one row (cols / 4 blocks) apart.
class DrawnStrips final : public WeightStrips {
 public:
  DrawnStrips(const DrawKey& key, float scale, Index cols, Index col0, float* keep)
      : key_(key), rk_(key), scale_(scale), cols_(cols), col0_(col0), keep_(keep) {}

  void fill(Index k0, Index kc, Index p0, Index n, float* strip) const override {
    eigen_assert(n == 64 && (col0_ + p0) % 64 == 0);
    const Index first = k0 * cols_ + col0_ + p0;  // W(k0, col0 + p0)'s entry of the draw
    float* kept = keep_ ? keep_ + first : nullptr;
    draw_groups16(key_, rk_, scale_, std::size_t(first / 4), std::size_t(cols_ / 4), std::size_t(kc),
                  [&](std::size_t g, const __m512 v[4]) {
                    for (int q = 0; q < 4; ++q) {
                      _mm512_storeu_ps(strip + 64 * g + 16 * q, v[q]);
                      if (kept) _mm512_storeu_ps(kept + Index(g) * cols_ + 16 * q, v[q]);
                    }
                  });
    (void)n;
  }

 private:
  DrawKey key_;
  PhiloxKey16 rk_;
  float scale_;
  Index cols_, col0_;
  float* keep_;
};

}  // namespace

void thin_gemm_aw_drawn(float* c, Index ldc, const float* a, Index lda, const DrawKey& key, float scale,
                        Index cols, Index col0, Index T, Index k, Index n, float* keep) {
  thin_gemm_aw_from(c, ldc, a, lda, DrawnStrips(key, scale, cols, col0, keep), T, k, n, false);
}

}  // namespace normsim::sim
#endif
