// Host stand-in for the cuBLAS calls the backend makes: a reference column-major GEMM (strided-batched),
// double accumulation, TF32 math mode emulated by rounding the operands to 10 mantissa bits. Only compiled
// into normsim_gpu_mock.
#pragma once
#include "cuda_runtime_api.h"

enum cublasStatus_t {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_INVALID_VALUE = 7,
  CUBLAS_STATUS_NOT_SUPPORTED = 15,
};
enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum cublasMath_t { CUBLAS_DEFAULT_MATH = 0, CUBLAS_TF32_TENSOR_OP_MATH = 3 };
enum cublasFillMode_t { CUBLAS_FILL_MODE_LOWER = 0, CUBLAS_FILL_MODE_UPPER = 1 };
// cublas_api.h's values, for the one mixed-precision GEMM the backend makes (bf16 operands, float32 output
// and accumulation; cudaDataType in cuda_runtime_api.h).
enum cublasComputeType_t { CUBLAS_COMPUTE_32F = 68 };
enum cublasGemmAlgo_t { CUBLAS_GEMM_DEFAULT = -1 };

struct cublasContext;
using cublasHandle_t = cublasContext*;

const char* cublasGetStatusString(cublasStatus_t status);
cublasStatus_t cublasCreate(cublasHandle_t* handle);
cublasStatus_t cublasDestroy(cublasHandle_t handle);
cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode);
cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode);
cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                                         int m, int n, int k, const float* alpha, const float* a, int lda,
                                         long long stride_a, const float* b, int ldb, long long stride_b,
                                         const float* beta, float* c, int ldc, long long stride_c, int batch);
cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                                         int m, int n, int k, const double* alpha, const double* a, int lda,
                                         long long stride_a, const double* b, int ldb, long long stride_b,
                                         const double* beta, double* c, int ldc, long long stride_c,
                                         int batch);
// The pointer-array forms: item p is A[p], B[p], C[p] (arrays in device memory, host memory here).
cublasStatus_t cublasSgemmBatched(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,
                                  int n, int k, const float* alpha, const float* const a[], int lda,
                                  const float* const b[], int ldb, const float* beta, float* const c[],
                                  int ldc, int batch);
cublasStatus_t cublasDgemmBatched(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb, int m,
                                  int n, int k, const double* alpha, const double* const a[], int lda,
                                  const double* const b[], int ldb, const double* beta, double* const c[],
                                  int ldc, int batch);
// Only A and B CUDA_R_16BF, C CUDA_R_32F, CUBLAS_COMPUTE_32F (else CUBLAS_STATUS_NOT_SUPPORTED): each bf16
// operand is exact in float, the products summed in double and C rounded once to float.
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t ta, cublasOperation_t tb,
                                          int m, int n, int k, const void* alpha, const void* a,
                                          cudaDataType a_type, int lda, long long stride_a, const void* b,
                                          cudaDataType b_type, int ldb, long long stride_b, const void* beta,
                                          void* c, cudaDataType c_type, int ldc, long long stride_c,
                                          int batch, cublasComputeType_t compute, cublasGemmAlgo_t algo);
