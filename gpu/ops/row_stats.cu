// Each row's statistics sums: one block per row: the kernel and its launcher, declared with its reference in
// gpu/stat_ops.hpp.
#include <math_constants.h>

#include "gpu/device_common.cuh"
#include "gpu/stat_ops.hpp"

namespace normsim::gpu {

namespace {

// One block per row: its sums and largest finite |x|, and with `next` the pair sums.
template <class R>
__global__ void row_stats_kernel(const R* x, const R* next, int n, double* out) {
  const std::size_t o = std::size_t(blockIdx.x) * n;
  double sq = 0, ab = 0, mx = 0, bad = 0, dot = 0, nsq = 0, dsq = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const double v = double(x[o + i]), a = fabs(v);
    sq += v * v;
    ab += a;
    if (isfinite(a))
      mx = fmax(mx, a);
    else
      bad += 1;
    if (next) {
      const double w = double(next[o + i]);
      dot += v * w;
      nsq += w * w;
      dsq += (w - v) * (w - v);
    }
  }
  sq = block_sum(sq), ab = block_sum(ab), bad = block_sum(bad), mx = block_max(mx);
  if (next) dot = block_sum(dot), nsq = block_sum(nsq), dsq = block_sum(dsq);
  if (threadIdx.x == 0) {
    double* s = out + std::size_t(blockIdx.x) * kRowStats;
    s[row_sq] = sq, s[row_abs] = ab, s[row_max_abs] = bad > 0 ? CUDART_NAN : mx, s[row_nonfinite] = bad;
    s[row_dot_next] = next ? dot : CUDART_NAN, s[row_next_sq] = next ? nsq : CUDART_NAN;
    s[row_diff_sq] = next ? dsq : CUDART_NAN;
  }
}

}  // namespace

template <class R>
void row_stats(const R* d_x, const R* d_next, int rows, int n, double* d_out) {
  if (rows == 0) return;
  row_stats_kernel<<<rows, row_threads(n)>>>(d_x, d_next, n, d_out);
  check_launch("row_stats_kernel");
}

NORMSIM_INSTANTIATE_OP(row_stats)

}  // namespace normsim::gpu
