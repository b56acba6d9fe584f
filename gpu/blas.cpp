#include "gpu/blas.hpp"

#include <algorithm>

#include "gpu/cuda_check.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/device_handles.hpp"
#include "gpu/ops.hpp"
#include "gpu/tuning.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// One strided batched cuBLAS product, row-major (the operands swapped: blas.hpp).
void strided_gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, float alpha, const float* a,
                  int lda, long long sa, const float* b, int ldb, long long sb, float beta, float* c, int ldc,
                  long long sc, int batch) {
  NORMSIM_CUDA_CHECK(cublasSgemmStridedBatched(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                               ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b, ldb, sb, a,
                                               lda, sa, &beta, c, ldc, sc, batch));
}

void strided_gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, double alpha, const double* a,
                  int lda, long long sa, const double* b, int ldb, long long sb, double beta, double* c,
                  int ldc, long long sc, int batch) {
  NORMSIM_CUDA_CHECK(cublasDgemmStridedBatched(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                               ta ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b, ldb, sb, a,
                                               lda, sa, &beta, c, ldc, sc, batch));
}

// The pointer-array forms: item q is A[q], B[q], C[q] (device arrays), beta 0.
void pointer_gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, float alpha, const float* const* a,
                  int lda, const float* const* b, int ldb, float* const* c, int ldc, int batch) {
  const float beta = 0;
  NORMSIM_CUDA_CHECK(cublasSgemmBatched(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n,
                                        m, k, &alpha, b, ldb, a, lda, &beta, c, ldc, batch));
}

void pointer_gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, double alpha,
                  const double* const* a, int lda, const double* const* b, int ldb, double* const* c, int ldc,
                  int batch) {
  const double beta = 0;
  NORMSIM_CUDA_CHECK(cublasDgemmBatched(h, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, n,
                                        m, k, &alpha, b, ldb, a, lda, &beta, c, ldc, batch));
}

// The partial products of one call, at most this many entries at a time (32 MB in double): items are taken
// in groups that fit.
constexpr long long kMaxPartEntries = 4 << 20;

// gemm with k cut into `slices`: slice j of an item takes A's columns (rows when transposed) and B's rows
// (columns when transposed) j kc to (j + 1) kc into its own m x n part. Per group of items: the slices'
// operand pointers (slice_pointers), every slice of every item in one pointer-array call, then sum_slices:
// three launches whatever the group's size.
template <class R>
void sliced_gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, R alpha, const R* a, int lda,
                 long long sa, const R* b, int ldb, long long sb, bool accumulate, R* c, int ldc,
                 long long sc, int batch, int slices) {
  const int kc = k / slices;
  const long long a_step = ta ? (long long)kc * lda : kc, b_step = tb ? kc : (long long)kc * ldb;
  const long long part = (long long)m * n;
  const int group = int(std::clamp<long long>(kMaxPartEntries / (slices * part), 1, batch));
  DeviceBuffer<R> parts(std::size_t(group) * std::size_t(slices) * std::size_t(part));
  DeviceBuffer<const R*> ptr(3 * std::size_t(group) * std::size_t(slices));
  for (int first = 0; first < batch; first += group) {
    const int items = std::min(group, batch - first);
    const int N = items * slices;
    slice_pointers(ptr.get(), a + first * sa, sa, a_step, b + first * sb, sb, b_step, parts.get(), part,
                   items, slices);
    pointer_gemm(h, ta, tb, m, n, kc, alpha, ptr.get(), lda, ptr.get() + N, ldb,
                 const_cast<R* const*>(ptr.get() + 2 * N), n, N);
    sum_slices(c + first * sc, parts.get(), slices, items, m, n, ldc, sc, accumulate);
  }
}

}  // namespace

int inner_slices(int m, int n, int k) {
  const Tuning& t = tuning();  // the gate's defaults: at most 64 tiles, k >= 1024, 512 tiles in all
  const long long tiles = (long long)((m + 31) / 32) * ((n + 31) / 32);
  if (tiles > t.slice_max_tiles || k < t.slice_min_k) return 1;
  int slices = 1;
  while (tiles * slices < t.slice_target_tiles && k % (2 * slices) == 0 && k / (2 * slices) >= 128)
    slices *= 2;
  return slices;
}

template <class R>
void cublas_gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, double alpha, const R* a, int lda,
                 long long sa, const R* b, int ldb, long long sb, double beta, R* c, int ldc, long long sc,
                 int batch) {
  if (batch == 0 || m == 0 || n == 0) return;
  strided_gemm(h, ta, tb, m, n, k, R(alpha), a, lda, sa, b, ldb, sb, R(beta), c, ldc, sc, batch);
}

template <class R>
void gemm(cublasHandle_t h, bool ta, bool tb, int m, int n, int k, double alpha, const R* a, int lda,
          long long sa, const R* b, int ldb, long long sb, double beta, R* c, int ldc, long long sc,
          int batch) {
  if (batch == 0 || m == 0 || n == 0) return;
  const int slices = beta == 0 || beta == 1 ? inner_slices(m, n, k) : 1;
  if (slices > 1)
    sliced_gemm<R>(h, ta, tb, m, n, k, R(alpha), a, lda, sa, b, ldb, sb, beta == 1, c, ldc, sc, batch,
                   slices);
  else
    cublas_gemm(h, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, batch);
}

template void gemm<float>(cublasHandle_t, bool, bool, int, int, int, double, const float*, int, long long,
                          const float*, int, long long, double, float*, int, long long, int);
template void gemm<double>(cublasHandle_t, bool, bool, int, int, int, double, const double*, int, long long,
                           const double*, int, long long, double, double*, int, long long, int);
template void cublas_gemm<float>(cublasHandle_t, bool, bool, int, int, int, double, const float*, int,
                                 long long, const float*, int, long long, double, float*, int, long long,
                                 int);
template void cublas_gemm<double>(cublasHandle_t, bool, bool, int, int, int, double, const double*, int,
                                  long long, const double*, int, long long, double, double*, int, long long,
                                  int);

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

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
