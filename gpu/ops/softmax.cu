// The attention softmax, forward and backward: one block per row: the kernel and its launcher, declared with
// its reference in gpu/ops.hpp.
#include <cfloat>

#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// One block per row.
template <class R>
__global__ void softmax_forward_kernel(R* sc, int T, bool causal) {
  R* row = sc + std::size_t(blockIdx.x) * T;
  const int last = causal ? int(blockIdx.x % T) : T - 1;
  R mx = -FLT_MAX;
  if (sizeof(R) == 8) mx = R(-DBL_MAX);
  for (int s = threadIdx.x; s <= last; s += blockDim.x) mx = max(mx, row[s]);
  mx = block_max(mx);
  double sum = 0;
  for (int s = threadIdx.x; s <= last; s += blockDim.x) sum += exp(double(row[s] - mx));
  sum = block_sum(sum);
  for (int s = threadIdx.x; s < T; s += blockDim.x)
    row[s] = s <= last ? R(exp(double(row[s] - mx)) / sum) : R(0);
}

template <class R>
__global__ void softmax_backward_kernel(const R* p, R* dp, int T, double scale) {
  const std::size_t o = std::size_t(blockIdx.x) * T;
  double dot = 0;
  for (int s = threadIdx.x; s < T; s += blockDim.x) dot += double(dp[o + s]) * double(p[o + s]);
  dot = block_sum(dot);
  for (int s = threadIdx.x; s < T; s += blockDim.x)
    dp[o + s] = R(R(double(p[o + s]) * (double(dp[o + s]) - dot)) * R(scale));
}

}  // namespace

template <class R>
void softmax_forward(R* d_scores, int rows, int T, bool causal) {
  if (rows == 0) return;
  softmax_forward_kernel<<<rows, row_threads(T)>>>(d_scores, T, causal);
  check_launch("softmax_forward_kernel");
}

template <class R>
void softmax_backward(const R* d_p, R* d_dp, int rows, int T, double scale) {
  if (rows == 0) return;
  softmax_backward_kernel<<<rows, row_threads(T)>>>(d_p, d_dp, T, scale);
  check_launch("softmax_backward_kernel");
}

NORMSIM_INSTANTIATE_OP(softmax_forward)
NORMSIM_INSTANTIATE_OP(softmax_backward)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
