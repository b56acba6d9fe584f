// Test control of the host mock of the CUDA runtime (gpu/mock/include): what device it pretends to be and
// how much memory it has. Only in the normsim_gpu_mock build.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>

namespace normsim::gpu::mock {

struct MockDevice {
  int count = 1;
  int major = 9, minor = 0;                        // compute capability
  std::size_t total_bytes = std::size_t(8) << 30;  // device memory
  cudaError_t driver_error = cudaSuccess;          // returned by every call, cudaGetDeviceCount included
  cudaError_t context_error = cudaSuccess;         // returned by calls that create the context
};

// Registers this build's backend where the CUDA backend would be (sim::register_cuda_backend, with the
// device probe), for the tests of --backend auto's choice and the probe's refusals on the mock's devices.
void register_as_cuda_backend();

// Replaces the device (allocations already made stay valid; the pool's idle memory is dropped).
// configure({}) restores the default.
void configure(const MockDevice& device);
const MockDevice& device();
// The default pool: bytes it has reserved from the device, and bytes of those handed out.
std::size_t pool_reserved_bytes();
std::size_t pool_used_bytes();

// What the backend asked of the device since the last reset_counters(): kernel launches (every launcher of
// gpu/ops.hpp and gpu/stat_ops.hpp), cuBLAS and cuSOLVER calls, host synchronizations
// (cudaDeviceSynchronize, cudaStreamSynchronize, cudaEventSynchronize) and blocking copies (cudaMemcpy:
// the host waits for the device before and after it), so tests can bound them per layer.
struct Counters {
  long launches = 0;
  long library_calls = 0;
  long syncs = 0;
  long blocking_copies = 0;
};
Counters counters();
void reset_counters();
void count_launch();
void count_library_call();

}  // namespace normsim::gpu::mock
