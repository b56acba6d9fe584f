// Each row's statistics sums: one block per row: the kernel and its launcher, declared with its reference in
// gpu/stat_ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/stat_ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// One block per row: the row's sim::RowSums, each thread's entries added as every device adds them, the
// partial sums reduced across the block.
template <class R>
__global__ void row_stats_kernel(const R* x, const R* next, int n, double* out) {
  const std::size_t o = std::size_t(blockIdx.x) * n;
  sim::RowSums r;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    r.add(double(x[o + i]));
    if (next) r.add_pair(double(x[o + i]), double(next[o + i]));
  }
  r.each_sum([](double v) { return block_sum(v); });
  r.max_abs = block_max(r.max_abs);
  if (threadIdx.x == 0) r.store(out + std::size_t(blockIdx.x) * kRowStats, next != nullptr);
}

}  // namespace

template <class R>
void row_stats(const R* d_x, const R* d_next, int rows, int n, double* d_out) {
  if (rows == 0) return;
  row_stats_kernel<<<rows, row_threads(n)>>>(d_x, d_next, n, d_out);
  check_launch("row_stats_kernel");
}

NORMSIM_INSTANTIATE_OP(row_stats)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
