#include "gpu/eigensolver.hpp"

#include "gpu/cuda_check.hpp"
#include "gpu/device_handles.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

BatchedEigenvalues::BatchedEigenvalues() : handle_(process_solver_handle()) {
  NORMSIM_CUDA_CHECK(cusolverDnCreateParams(&params_));
}

BatchedEigenvalues::~BatchedEigenvalues() {
  if (params_) cusolverDnDestroyParams(params_);
}

std::size_t BatchedEigenvalues::workspace_bytes(int n, int batch) {
  std::size_t device = 0, host = 0;
  NORMSIM_CUDA_CHECK(cusolverDnXsyevBatched_bufferSize(
      handle_, params_, CUSOLVER_EIG_MODE_NOVECTOR, CUBLAS_FILL_MODE_LOWER, n, CUDA_R_64F, nullptr, n,
      CUDA_R_64F, nullptr, CUDA_R_64F, &device, &host, batch));
  if (host > host_work_.size()) host_work_.resize(host);
  return device;
}

void BatchedEigenvalues::compute(double* d_a, int n, int batch, double* d_w, int* d_info) {
  if (n == 0 || batch == 0) return;
  const std::size_t device = workspace_bytes(n, batch);
  if (device > device_work_.size()) device_work_ = DeviceBuffer<char>(device);
  NORMSIM_CUDA_CHECK(cusolverDnXsyevBatched(handle_, params_, CUSOLVER_EIG_MODE_NOVECTOR,
                                            CUBLAS_FILL_MODE_LOWER, n, CUDA_R_64F, d_a, n, CUDA_R_64F, d_w,
                                            CUDA_R_64F, device_work_.get(), device_work_.size(),
                                            host_work_.data(), host_work_.size(), d_info, batch));
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
