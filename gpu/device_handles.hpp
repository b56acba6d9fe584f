// The process's cuBLAS and cuSOLVER handles and the lock of its device (issue 29 item 3): a sweep's
// configurations and a Python session's runs reuse one handle of each instead of creating them per run
// (cuBLAS's and cuSOLVER's set-up is milliseconds against a small stack's tens).
#pragma once
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <mutex>

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// Created on first use and kept for the life of the process: never destroyed, because a static destructor
// would run after the CUDA runtime's own teardown; the driver releases them at exit. Throws (as
// NORMSIM_CUDA_CHECK does) when the first creation fails, and tries again on the next call.
cublasHandle_t process_blas_handle();
cusolverDnHandle_t process_solver_handle();

// Held by a backend run for its whole length: the handles, and the device they drive, serve one run at a
// time (two Python threads running normsim.run on the GPU take turns).
std::unique_lock<std::mutex> lock_device();

// The number of handles this process has created (tests: later runs create none).
int handles_created();

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
