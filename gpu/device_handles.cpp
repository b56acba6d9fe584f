#include "gpu/device_handles.hpp"

#include <atomic>

#include "gpu/cuda_check.hpp"

namespace normsim::gpu {

namespace {
std::mutex creation;  // guards the handles' first creation
std::atomic<int> created{0};
}  // namespace

cublasHandle_t process_blas_handle() {
  static cublasHandle_t handle = nullptr;
  const std::lock_guard<std::mutex> guard(creation);
  if (!handle) {
    NORMSIM_CUDA_CHECK(cublasCreate(&handle));
    ++created;
  }
  return handle;
}

cusolverDnHandle_t process_solver_handle() {
  static cusolverDnHandle_t handle = nullptr;
  const std::lock_guard<std::mutex> guard(creation);
  if (!handle) {
    NORMSIM_CUDA_CHECK(cusolverDnCreate(&handle));
    ++created;
  }
  return handle;
}

std::unique_lock<std::mutex> lock_device() {
  static std::mutex device;
  return std::unique_lock<std::mutex>(device);
}

int handles_created() {
  return created;
}

}  // namespace normsim::gpu
