// The host mock of cuSOLVER's batched symmetric eigensolver (see include/cusolverDn.h): each n x n matrix
// (column-major, the `uplo` triangle read) goes through Eigen's SelfAdjointEigenSolver in double, the
// eigenvalues ascending as cuSOLVER writes them, info 0 or 1 (no convergence). A is left holding NaN, as
// cuSOLVER leaves it overwritten, so nothing can read it afterwards by mistake. One library call each.
#include <cusolverDn.h>

#include <Eigen/Eigenvalues>
#include <limits>

#include "gpu/mock/mock_device.hpp"

struct cusolverDnContext {};
struct cusolverDnParams {};

cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t* handle) {
  *handle = new cusolverDnContext{};
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t handle) {
  delete handle;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnCreateParams(cusolverDnParams_t* params) {
  *params = new cusolverDnParams{};
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnDestroyParams(cusolverDnParams_t params) {
  delete params;
  return CUSOLVER_STATUS_SUCCESS;
}

namespace {
bool supported(cusolverDnHandle_t h, cusolverEigMode_t jobz, cudaDataType a, cudaDataType w,
               cudaDataType compute) {
  return h && jobz == CUSOLVER_EIG_MODE_NOVECTOR && a == CUDA_R_64F && w == CUDA_R_64F &&
         compute == CUDA_R_64F;
}
}  // namespace

cusolverStatus_t cusolverDnXsyevBatched_bufferSize(cusolverDnHandle_t h, cusolverDnParams_t,
                                                   cusolverEigMode_t jobz, cublasFillMode_t, int64_t n,
                                                   cudaDataType ta, const void*, int64_t lda, cudaDataType tw,
                                                   const void*, cudaDataType tc, std::size_t* device_bytes,
                                                   std::size_t* host_bytes, int64_t batch) {
  if (!supported(h, jobz, ta, tw, tc) || n < 0 || lda < n || batch < 0) return CUSOLVER_STATUS_INVALID_VALUE;
  *device_bytes = std::size_t(n) * sizeof(double);  // the mock needs none; a real solver does
  *host_bytes = 0;
  return CUSOLVER_STATUS_SUCCESS;
}

cusolverStatus_t cusolverDnXsyevBatched(cusolverDnHandle_t h, cusolverDnParams_t, cusolverEigMode_t jobz,
                                        cublasFillMode_t uplo, int64_t n, cudaDataType ta, void* A,
                                        int64_t lda, cudaDataType tw, void* W, cudaDataType tc, void*,
                                        std::size_t, void*, std::size_t, int* info, int64_t batch) {
  if (!supported(h, jobz, ta, tw, tc) || n < 0 || lda < n || batch < 0) return CUSOLVER_STATUS_INVALID_VALUE;
  normsim::gpu::mock::count_library_call();
  using Map = Eigen::Map<Eigen::MatrixXd, 0, Eigen::OuterStride<>>;
  for (int64_t b = 0; b < batch; ++b) {
    Map a(static_cast<double*>(A) + b * lda * n, n, n, Eigen::OuterStride<>(lda));
    const Eigen::MatrixXd full = uplo == CUBLAS_FILL_MODE_LOWER
                                     ? Eigen::MatrixXd(a.selfadjointView<Eigen::Lower>())
                                     : Eigen::MatrixXd(a.selfadjointView<Eigen::Upper>());
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(full, Eigen::EigenvaluesOnly);
    info[b] = eig.info() == Eigen::Success ? 0 : 1;
    Eigen::Map<Eigen::VectorXd>(static_cast<double*>(W) + b * n, n) = eig.eigenvalues();
    a.setConstant(std::numeric_limits<double>::quiet_NaN());
  }
  return CUSOLVER_STATUS_SUCCESS;
}
