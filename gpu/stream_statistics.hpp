// The statistics of one tensor of a batch (S x T x d, sample-major) on the device, into DeviceStats
// fields: the fused row kernel and its per-sample reductions (gpu/stat_kernels.hpp), and eff_rank from
// each sample's Gram matrix (cuBLAS, double) and its eigenvalues (cuSOLVER, batched). Scratch is
// allocated once per batch and reused for every layer (gpu/memory_plan.hpp's statistics_bytes counts it).
// Nothing here synchronizes with the host.
#pragma once
#include <cstddef>

#include <cublas_v2.h>

#include "gpu/device_buffer.hpp"
#include "gpu/eigensolver.hpp"

namespace normsim::gpu {

template <class R>
class StreamStatistics {
 public:
  // eff_rank: whether stream() computes it (the config's `metrics` may leave it out; then no Gram scratch).
  StreamStatistics(cublasHandle_t blas, int S, int T, int d, bool eff_rank);
  // x_l's stream fields (kStreamFields x S at d_fields; the pair's with next = x_{l+1}, or null) and its
  // effective rank (S at d_eff_rank).
  void stream(const R* d_x, const R* d_next, double* d_fields, double* d_eff_rank);
  // Sums, mean square and finiteness only (a gradient, the output): kStreamFields x S at d_fields; with
  // d_next, the pair's fields too (two lanes' f_cos_next for lane_cos).
  void tensor(const R* d_x, double* d_fields, const R* d_next = nullptr);

 private:
  void effective_rank(const R* d_x, double* d_out);

  cublasHandle_t blas_;
  int S_, T_, d_, n_;  // n_: the Gram matrix's order, min(T, d)
  bool eff_rank_;
  DeviceBuffer<double> rows_, colsq_, wide_, gram_, eigenvalues_;
  DeviceBuffer<int> info_;
  BatchedEigenvalues solver_;
};

}  // namespace normsim::gpu
