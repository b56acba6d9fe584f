// The statistics of one tensor of a batch (S x T x d, sample-major) on the device, into DeviceStats
// fields: the fused row kernel and its per-sample reductions (gpu/stat_ops.hpp), and eff_rank from
// each sample's Gram matrix (cuBLAS, double) and its eigenvalues (cuSOLVER, batched). The Grams of several
// streams are held and solved in one batched call (gram_slots): cuSOLVER's syevBatched costs about 26
// launches a call whatever the batch, and one call per stream (the first version: 1,690 launches and a third
// of W1's kernel time with every metric, for 65 streams of 4 samples of 64 x 64) was launch-bound. Scratch is
// allocated once per batch and reused for every layer (gpu/memory_plan.hpp's statistics_bytes counts it).
// Nothing here synchronizes with the host; finish() solves what is held.
#pragma once
#include <cstddef>
#include <vector>

#include <cublas_v2.h>

#include "gpu/device_buffer.hpp"
#include "gpu/eigensolver.hpp"
#include "sim/metric_set.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// How many streams' Grams (n = min(T, d)) StreamStatistics holds before one solve: as many as 4 MiB per
// sample holds, at least 1, at most `streams`.
int gram_slots(int T, int d, int streams);
// The stream() calls of one batch: x_0 .. x_K, and each lane's at every layer where a placement has lanes.
inline int eff_rank_streams(int depth, int lanes) {
  return (depth + 1) * (lanes > 1 ? lanes + 1 : 1);
}

template <class R>
class StreamStatistics {
 public:
  // metrics: the config's; stream() computes eff_rank and token_cos only where they are asked for (else
  // NaN, never stored: sim::record_from_scalars keeps the metrics asked for), and without eff_rank holds no
  // Gram scratch. streams: how many stream() calls a batch makes (the Grams held at once may be fewer).
  StreamStatistics(cublasHandle_t blas, int S, int T, int d, const sim::MetricSet& metrics, int streams);
  // x_l's stream fields (kStreamFields x S at d_fields; the pair's with next = x_{l+1}, or null) and its
  // effective rank (S at d_eff_rank, written by the solve of its group of streams: by finish() at the
  // latest).
  void stream(const R* d_x, const R* d_next, double* d_fields, double* d_eff_rank);
  // Solves the Grams still held, writing their streams' eff_rank: before the batch's statistics are read.
  void finish();
  // Sums, mean square and finiteness only (a gradient, the output): kStreamFields x S at d_fields; with
  // d_next, the pair's fields too (two lanes' f_cos_next for lane_cos).
  void tensor(const R* d_x, double* d_fields, const R* d_next = nullptr);

 private:
  void effective_rank(const R* d_x, double* d_out);

  cublasHandle_t blas_;
  int S_, T_, d_, n_;  // n_: the Gram matrix's order, min(T, d)
  bool eff_rank_, token_cos_;
  int slots_;                     // Grams held before a solve (S each)
  std::vector<double*> pending_;  // the eff_rank outputs of the Grams held, in slot order
  DeviceBuffer<double> rows_, colsq_, wide_, gram_, eigenvalues_;
  DeviceBuffer<int> info_;
  BatchedEigenvalues solver_;
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
