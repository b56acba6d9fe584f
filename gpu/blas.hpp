// Row-major batched matrix products through cuBLAS (which is column-major): the one place that knows the
// transposition trick. A row-major X (r x c, leading dimension ld) is the column-major X^T, so
// C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T with the operands swapped.
#pragma once
#include <cublas_v2.h>

#include <cstdint>

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// For each of `batch` items: C (m x n, ldc) = alpha op(A) (m x k) op(B) (k x n) + beta C, row-major, item i
// at A + i*sA, B + i*sB, C + i*sC. op(X) = X^T when the flag is set. With beta 0 or 1, k is cut into
// inner_slices(m, n, k) slices.
template <class R>
void gemm(cublasHandle_t handle, bool trans_a, bool trans_b, int m, int n, int k, double alpha, const R* d_a,
          int lda, long long stride_a, const R* d_b, int ldb, long long stride_b, double beta, R* d_c,
          int ldc, long long stride_c, int batch);

// How many slices gemm cuts the inner dimension k of one m x n x k item into (1: none). cuBLAS gives each
// output tile one thread block that walks all of k, so an item with few tiles and a long k leaves most of
// the device idle: W1's 64 x 512 x 2048 product (4 samples) ran as 128 blocks of 32 x 32 at 6.6 TFLOP/s
// (ncu, H200, 2026-11-28). Sliced, every slice of every item is a product of its own, all in one call, and
// sum_slices (gpu/ops.hpp) adds each item's slices in double in a fixed order. Only items of at most 64 tiles
// of 32 x 32 with k >= 1024 are cut; the count doubles while under 512 tiles in all and each slice keeps at
// least 128 of k (k divisible): a function of the item's shape alone, so an item's numbers do not depend on
// how many items share the call (the batch size) or on the device. The gate's three numbers are
// gpu/tuning.hpp's, which a benchmark may change between runs.
int inner_slices(int m, int n, int k);

// gemm as one cuBLAS strided batched call, never sliced: the benchmark's reference rate
// (bench/gpu_bench.cpp), which must be cuBLAS's own whatever inner_slices says of its shape.
template <class R>
void cublas_gemm(cublasHandle_t handle, bool trans_a, bool trans_b, int m, int n, int k, double alpha,
                 const R* d_a, int lda, long long stride_a, const R* d_b, int ldb, long long stride_b,
                 double beta, R* d_c, int ldc, long long stride_c, int batch);

// precision = "bf16" (sim/bf16.hpp): the same product with A and B bf16 (the bits round_to_bf16 gives) and
// C float, accumulated in float32 (cublasGemmStridedBatchedEx, CUDA_R_16BF operands, CUBLAS_COMPUTE_32F),
// as a bf16 matmul under torch.autocast; the caller rounds C to bf16 where the GPU would store it.
void gemm_bf16(cublasHandle_t handle, bool trans_a, bool trans_b, int m, int n, int k, double alpha,
               const std::uint16_t* d_a, int lda, long long stride_a, const std::uint16_t* d_b, int ldb,
               long long stride_b, double beta, float* d_c, int ldc, long long stride_c, int batch);

// The process's cuBLAS handle (gpu/device_handles.hpp) in a math mode for one run: tf32 lets float products
// use TF32 tensor cores; the default mode is restored when it goes.
class Blas {
 public:
  explicit Blas(bool tf32 = false);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  cublasHandle_t handle() const { return handle_; }
  void set_tf32(bool on);

 private:
  cublasHandle_t handle_ = nullptr;
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
