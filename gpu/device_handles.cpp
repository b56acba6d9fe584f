#include "gpu/device_handles.hpp"

#include <atomic>

#include "gpu/cuda_check.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {
std::mutex creation;  // guards the handles' first creation
std::atomic<int> created{0};

// `handle`, created by `create` (a cuBLAS or cuSOLVER call, checked) the first time.
template <class Handle, class Status>
Handle made_once(Handle& handle, Status (*create)(Handle*), const char* call) {
  const std::lock_guard<std::mutex> guard(creation);
  if (!handle) {
    check_cuda(create(&handle), call, __FILE__, __LINE__);
    ++created;
  }
  return handle;
}
}  // namespace

cublasHandle_t process_blas_handle() {
  static cublasHandle_t handle = nullptr;
  return made_once(handle, &cublasCreate, "cublasCreate(&handle)");
}

cusolverDnHandle_t process_solver_handle() {
  static cusolverDnHandle_t handle = nullptr;
  return made_once(handle, &cusolverDnCreate, "cusolverDnCreate(&handle)");
}

std::unique_lock<std::mutex> lock_device() {
  static std::mutex device;
  return std::unique_lock<std::mutex>(device);
}

int handles_created() {
  return created;
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
