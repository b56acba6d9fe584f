// A stream's fields from its row statistics: one block per sample: the kernel and its launcher, declared with
// its reference in gpu/stat_ops.hpp.
#include <algorithm>

#include "gpu/device_common.cuh"
#include "gpu/stat_ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// One block per sample, threads over its tokens (and its columns' squares): the reference's sums, reduced
// across the block, finished as the reference finishes them.
__global__ void stream_stats_finish_kernel(const double* row, const double* colsq, int S, int T, int d,
                                           double* out) {
  const int s = blockIdx.x;
  sim::StreamSums m;
  for (int c = threadIdx.x; colsq && c < d; c += blockDim.x) m.columns += colsq[std::size_t(s) * d + c];
  for (int t = threadIdx.x; t < T; t += blockDim.x)
    sim::add_row_stats(m, row + (std::size_t(s) * T + t) * kRowStats);
  m.each_sum([](double v) { return block_sum(v); });
  m.max_abs = block_max(m.max_abs);
  if (threadIdx.x != 0) return;
  m.has_columns = colsq != nullptr;
  for (int f = 0; f < kStreamFields; ++f) out[f * S + s] = sim::finish_stream_field(f, m, T, d);
}

}  // namespace

void stream_stats_finish(const double* d_row, const double* d_colsq, int S, int T, int d, double* d_out) {
  if (S == 0) return;
  stream_stats_finish_kernel<<<S, row_threads(std::max(T, d))>>>(d_row, d_colsq, S, T, d, d_out);
  check_launch("stream_stats_finish_kernel");
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
