// The host mock of cuBLAS (see include/cublas_v2.h): a reference column-major strided-batched GEMM,
// C = alpha op(A) op(B) + beta C, summed in double. As cuBLAS, C is not read when beta == 0 (it may hold
// NaN there), and TF32 math mode rounds float operands to TF32 (10 explicit mantissa bits) first; the
// mixed-precision GEMM takes bf16 operands (widened exactly) to a float C, summed in double.
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "gpu/mock/mock_device.hpp"

struct cublasContext {
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
};

namespace {

// Round to nearest even at 13 dropped mantissa bits: TF32's 10-bit mantissa in a float's storage.
float to_tf32(float x) {
  if (!std::isfinite(x)) return x;
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  u += 0xFFFu + ((u >> 13) & 1u);
  u &= ~0x1FFFu;
  std::memcpy(&x, &u, 4);
  return x;
}

template <class R>
cublasStatus_t gemm_batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            R alpha, const R* a, int lda, long long sa, const R* b, int ldb, long long sb,
                            R beta, R* c, int ldc, long long sc, int batch) {
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m < 0 || n < 0 || k < 0 || batch < 0 || ldc < std::max(1, m) ||
      lda < std::max(1, ta == CUBLAS_OP_N ? m : k) || ldb < std::max(1, tb == CUBLAS_OP_N ? k : n))
    return CUBLAS_STATUS_INVALID_VALUE;
  const bool tf32 = sizeof(R) == 4 && h->math == CUBLAS_TF32_TENSOR_OP_MATH;
  auto operand = [&](R x) { return tf32 ? R(to_tf32(float(x))) : x; };
  for (int p = 0; p < batch; ++p) {
    const R* A = a + p * sa;
    const R* B = b + p * sb;
    R* C = c + p * sc;
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double acc = 0;
        for (int l = 0; l < k; ++l) {
          const R x = ta == CUBLAS_OP_N ? A[i + std::size_t(l) * lda] : A[l + std::size_t(i) * lda];
          const R y = tb == CUBLAS_OP_N ? B[l + std::size_t(j) * ldb] : B[j + std::size_t(l) * ldb];
          acc += double(operand(x)) * double(operand(y));
        }
        R& out = C[i + std::size_t(j) * ldc];
        out = beta == R(0) ? R(double(alpha) * acc) : R(double(alpha) * acc + double(beta) * double(out));
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}

// The pointer-array form: item p at a[p], b[p], c[p], each one item of gemm_batched.
template <class R>
cublasStatus_t gemm_pointer_array(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                  int k, R alpha, const R* const a[], int lda, const R* const b[], int ldb,
                                  R beta, R* const c[], int ldc, int batch) {
  for (int p = 0; p < batch; ++p)
    if (const cublasStatus_t e =
            gemm_batched<R>(h, ta, tb, m, n, k, alpha, a[p], lda, 0, b[p], ldb, 0, beta, c[p], ldc, 0, 1);
        e != CUBLAS_STATUS_SUCCESS)
      return e;
  return CUBLAS_STATUS_SUCCESS;
}

}  // namespace

const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  // cuBLAS creates the CUDA context; it fails when the context cannot be made.
  if (cudaFree(nullptr) != cudaSuccess) {
    *handle = nullptr;
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  *handle = new cublasContext{};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  *mode = handle->math;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                         int n, int k, const float* alpha, const float* a, int lda,
                                         long long sa, const float* b, int ldb, long long sb,
                                         const float* beta, float* c, int ldc, long long sc, int batch) {
  normsim::gpu::mock::count_library_call();
  return gemm_batched<float>(h, ta, tb, m, n, k, *alpha, a, lda, sa, b, ldb, sb, *beta, c, ldc, sc, batch);
}

cublasStatus_t cublasDgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                         int n, int k, const double* alpha, const double* a, int lda,
                                         long long sa, const double* b, int ldb, long long sb,
                                         const double* beta, double* c, int ldc, long long sc, int batch) {
  normsim::gpu::mock::count_library_call();
  return gemm_batched<double>(h, ta, tb, m, n, k, *alpha, a, lda, sa, b, ldb, sb, *beta, c, ldc, sc, batch);
}

cublasStatus_t cublasSgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                  int k, const float* alpha, const float* const a[], int lda,
                                  const float* const b[], int ldb, const float* beta, float* const c[],
                                  int ldc, int batch) {
  normsim::gpu::mock::count_library_call();
  return gemm_pointer_array<float>(h, ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc, batch);
}

cublasStatus_t cublasDgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                  int k, const double* alpha, const double* const a[], int lda,
                                  const double* const b[], int ldb, const double* beta, double* const c[],
                                  int ldc, int batch) {
  normsim::gpu::mock::count_library_call();
  return gemm_pointer_array<double>(h, ta, tb, m, n, k, *alpha, a, lda, b, ldb, *beta, c, ldc, batch);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                          int n, int k, const void* alpha, const void* a, cudaDataType a_type,
                                          int lda, long long sa, const void* b, cudaDataType b_type, int ldb,
                                          long long sb, const void* beta, void* c, cudaDataType c_type,
                                          int ldc, long long sc, int batch, cublasComputeType_t compute,
                                          cublasGemmAlgo_t) {
  normsim::gpu::mock::count_library_call();
  if (a_type != CUDA_R_16BF || b_type != CUDA_R_16BF || c_type != CUDA_R_32F || compute != CUBLAS_COMPUTE_32F)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  // The bf16 operands widened to float (exact: their bits are a float's upper half), then the float GEMM.
  const auto widen = [](const void* p, bool trans, int rows, int cols, int ld, long long stride, int count) {
    // Stored column-major as r x c (op(X) = X^T: the transpose): the last item's last column ends the span.
    const int r = trans ? cols : rows, c = trans ? rows : cols;
    const std::size_t n_items = count == 0 || r == 0 || c == 0
                                    ? 0
                                    : std::size_t(count - 1) * std::size_t(stride) +
                                          std::size_t(ld) * std::size_t(c - 1) + std::size_t(r);
    std::vector<float> out(n_items);
    const auto* bits = static_cast<const std::uint16_t*>(p);
    for (std::size_t i = 0; i < n_items; ++i) {
      const std::uint32_t u = std::uint32_t(bits[i]) << 16;
      std::memcpy(&out[i], &u, 4);
    }
    return out;
  };
  if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
  const std::vector<float> fa = widen(a, ta != CUBLAS_OP_N, m, k, lda, sa, batch),
                           fb = widen(b, tb != CUBLAS_OP_N, k, n, ldb, sb, batch);
  return gemm_batched<float>(h, ta, tb, m, n, k, *static_cast<const float*>(alpha), fa.data(), lda, sa,
                             fb.data(), ldb, sb, *static_cast<const float*>(beta), static_cast<float*>(c),
                             ldc, sc, batch);
}
