// Eigenvalues of a batch of symmetric matrices on the device (eff_rank's Gram matrices): cuSOLVER's
// batched syev (cusolverDnXsyevBatched, double, eigenvalues only). The one place that calls cuSOLVER (on
// the process's handle, gpu/device_handles.hpp); gpu/mock/include/cusolverDn.h stands in for it in the mock
// build.
#pragma once
#include <cstddef>
#include <vector>

#include <cusolverDn.h>

#include "gpu/device_buffer.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

class BatchedEigenvalues {
 public:
  BatchedEigenvalues();
  ~BatchedEigenvalues();
  BatchedEigenvalues(const BatchedEigenvalues&) = delete;
  BatchedEigenvalues& operator=(const BatchedEigenvalues&) = delete;
  // d_a: `batch` symmetric n x n matrices, contiguous (overwritten); d_w: n eigenvalues each, ascending;
  // d_info: one status each (0: converged). Asynchronous on the default stream.
  void compute(double* d_a, int n, int batch, double* d_w, int* d_info);
  // Device workspace the solver asks for at this size (the memory plan counts it).
  std::size_t workspace_bytes(int n, int batch);

 private:
  cusolverDnHandle_t handle_ = nullptr;  // the process's (not owned)
  cusolverDnParams_t params_ = nullptr;
  DeviceBuffer<char> device_work_;
  std::vector<char> host_work_;
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
