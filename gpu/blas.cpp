#include "gpu/blas.hpp"

#include "gpu/cuda_check.hpp"
#include "gpu/device_handles.hpp"

namespace normsim::gpu {

template <>
void gemm<float>(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, double alpha, const float* a,
                 int lda, long long sa, const float* b, int ldb, long long sb, double beta, float* c, int ldc,
                 long long sc, int batch) {
  if (batch == 0 || m == 0 || n == 0) return;
  const float al = float(alpha), be = float(beta);
  NORMSIM_CUDA_CHECK(cublasSgemmStridedBatched(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                               ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &al, b, ldb, sb, a,
                                               lda, sa, &be, c, ldc, sc, batch));
}

template <>
void gemm<double>(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, double alpha, const double* a,
                  int lda, long long sa, const double* b, int ldb, long long sb, double beta, double* c,
                  int ldc, long long sc, int batch) {
  if (batch == 0 || m == 0 || n == 0) return;
  NORMSIM_CUDA_CHECK(cublasDgemmStridedBatched(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                               ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b, ldb, sb, a,
                                               lda, sa, &beta, c, ldc, sc, batch));
}

void gemm_bf16(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, double alpha, const std::uint16_t* a,
               int lda, long long sa, const std::uint16_t* b, int ldb, long long sb, double beta, float* c,
               int ldc, long long sc, int batch) {
  if (batch == 0 || m == 0 || n == 0) return;
  const float al = float(alpha), be = float(beta);
  NORMSIM_CUDA_CHECK(cublasGemmStridedBatchedEx(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                                ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &al, b, CUDA_R_16BF,
                                                ldb, sb, a, CUDA_R_16BF, lda, sa, &be, c, CUDA_R_32F, ldc, sc,
                                                batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

Blas::Blas(bool tf32) : handle_(process_blas_handle()) {
  set_tf32(tf32);
}

Blas::~Blas() {
  cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH);
}

void Blas::set_tf32(bool on) {
  NORMSIM_CUDA_CHECK(cublasSetMathMode(handle_, on ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH));
}

}  // namespace normsim::gpu
