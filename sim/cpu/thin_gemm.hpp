// Float32 products of a thin activation matrix (T tokens x k, row-major) with a weight matrix, without
// packing the weight into panels. Eigen's GEMM copies both operands into packed panels before multiplying;
// for normsim's shapes (T = 64 tokens against a 512 x 2048 weight used once per pass) packing the weight is
// a full extra pass over it for every product: on W1's shapes Eigen reached 140-165 GFLOP/s on one core of
// the project machine where these kernels reach 184-231 (docs/benchmarks.md). Here a register tile of 64
// entries x 6 accumulates vector loads of one operand times broadcasts of the other, one fused multiply-add
// per entry and k, k ascending. A W^T reads the weight in place; A W reads it through a small strip buffer
// (64 columns x 256 rows) that its producer fills: a copy of W, or W's draw itself (WeightStrips). An
// entry's value therefore depends only on its row of A, its column of the weight and whether C is
// accumulated into, never on the tile, block, thread or strip producer that computes it. Built with
// AVX-512 only (has_thin_gemm); elsewhere the CPU backend uses Eigen.
#pragma once
#include <Eigen/Core>

namespace normsim::sim {

#if defined(__AVX512F__)
inline constexpr bool has_thin_gemm = true;
#else
inline constexpr bool has_thin_gemm = false;
#endif

// Columns [0, n) of C (+)= A W: A (T x k, row stride lda), W (k x n, row stride ldw), C (T x n, ldc).
void thin_gemm_aw(float* c, Eigen::Index ldc, const float* a, Eigen::Index lda, const float* w,
                  Eigen::Index ldw, Eigen::Index T, Eigen::Index k, Eigen::Index n, bool accumulate);

// A W's weight, handed over a strip at a time: fill(k0, kc, p0, cols, strip) writes W(k0 + i, p0 + j) into
// strip[64 i + j] for i < kc (<= 256) and j < cols (<= 64), p0 a multiple of 64. A W in memory is one
// (thin_gemm_aw); a W drawn as the product asks for it is another (drawn_product.hpp).
class WeightStrips {
 public:
  virtual void fill(Eigen::Index k0, Eigen::Index kc, Eigen::Index p0, Eigen::Index cols,
                    float* strip) const = 0;

 protected:
  ~WeightStrips() = default;
};

// thin_gemm_aw with W's strips from `w` (W is k x n).
void thin_gemm_aw_from(float* c, Eigen::Index ldc, const float* a, Eigen::Index lda, const WeightStrips& w,
                       Eigen::Index T, Eigen::Index k, Eigen::Index n, bool accumulate);

// Columns [0, n) of C (+)= A W^T: at = A^T (k x T, row-major, so a token's k entries are T apart),
// W (n x k, row stride ldw), C (T x n, ldc).
void thin_gemm_awt(float* c, Eigen::Index ldc, const float* at, const float* w, Eigen::Index ldw,
                   Eigen::Index T, Eigen::Index k, Eigen::Index n, bool accumulate);

// at = a^T for thin_gemm_awt: a (T x k, row stride lda) into at (k x T, row-major), in 16 x 16 tiles
// transposed in registers (Eigen's transpose of a 64 x 2048 row-major matrix took 196 us, a third of the
// product's time, and runs before the product's threads start; tiles copied entry by entry 44.5 us, in
// registers 29.8, one thread, the same minute).
void transpose_for_awt(float* at, const float* a, Eigen::Index lda, Eigen::Index T, Eigen::Index k);

}  // namespace normsim::sim
