// The one way CUDA, cuBLAS and cuSOLVER errors are checked: a macro that throws std::runtime_error with the
// call, the file and the line (style.md: errors are loud and carry their location).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <stdexcept>
#include <string>

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

[[noreturn]] inline void throw_cuda_error(const char* what, const char* detail, const char* file, int line) {
  throw std::runtime_error(std::string("CUDA error: ") + what + " failed: " + detail + " at " + file + ":" +
                           std::to_string(line));
}
inline void check_cuda(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) throw_cuda_error(what, cudaGetErrorString(e), file, line);
}
inline void check_cuda(cublasStatus_t e, const char* what, const char* file, int line) {
  if (e != CUBLAS_STATUS_SUCCESS) throw_cuda_error(what, cublasGetStatusString(e), file, line);
}
inline void check_cuda(cusolverStatus_t e, const char* what, const char* file, int line) {
  // cuSOLVER has no status-string function: the number is cusolver_common.h's cusolverStatus_t.
  if (e != CUSOLVER_STATUS_SUCCESS)
    throw_cuda_error(what, ("cusolverStatus_t " + std::to_string(int(e))).c_str(), file, line);
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu

// Wraps a CUDA runtime, cuBLAS or cuSOLVER call: NORMSIM_CUDA_CHECK(cudaMalloc(&p, n));
#define NORMSIM_CUDA_CHECK(call) ::normsim::gpu::check_cuda((call), #call, __FILE__, __LINE__)
