// Float32 products of a thin activation matrix (T tokens x k, row-major) with a weight matrix, without
// packing the weight. Eigen's GEMM copies both operands into packed panels before multiplying; for
// normsim's shapes (T = 64 tokens against a 512 x 2048 weight used once per pass) packing the weight is a
// full extra pass over it for every product: on W1's shapes Eigen reached 140-165 GFLOP/s on one core of
// the project machine where these kernels reach 184-231 (docs/benchmarks.md). Here the weight is read in
// place: a register tile of 64 entries x 6 accumulates vector loads of one operand times broadcasts of the
// other, one fused multiply-add per entry and k, k ascending. An entry's value therefore depends only on
// its row of A, its column of the weight and whether C is accumulated into, never on the tile, block or
// thread that computes it. Built with AVX-512 only (has_thin_gemm); elsewhere the CPU backend uses Eigen.
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

// Columns [0, n) of C (+)= A W^T: at = A^T (k x T, row-major, so a token's k entries are T apart),
// W (n x k, row stride ldw), C (T x n, ldc).
void thin_gemm_awt(float* c, Eigen::Index ldc, const float* at, const float* w, Eigen::Index ldw,
                   Eigen::Index T, Eigen::Index k, Eigen::Index n, bool accumulate);

// at = a^T for thin_gemm_awt: a (T x k, row stride lda) into at (k x T, row-major), in 16 x 16 tiles
// (Eigen's transpose of a 64 x 2048 row-major matrix took 196 us, a third of the product's time, and
// runs before the product's threads start; the tiles take 47).
void transpose_for_awt(float* at, const float* a, Eigen::Index lda, Eigen::Index T, Eigen::Index k);

}  // namespace normsim::sim
