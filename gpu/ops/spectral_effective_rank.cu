// Eff_rank from a Gram matrix's eigenvalues: one block per sample: the kernel and its launcher, declared with
// its reference in gpu/stat_ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/stat_ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// One block per sample: sim/statistic_finish.hpp's terms over its n eigenvalues, in two block sums (the
// total, then the entropy).
__global__ void spectral_effective_rank_kernel(const double* w, const int* info, int n, double* out) {
  const double* e = w + std::size_t(blockIdx.x) * n;
  double total = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) total += sim::singular_value_of(e[i]);
  total = block_sum(total);
  double entropy = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    entropy += sim::rank_entropy_term(sim::singular_value_of(e[i]), total);
  entropy = block_sum(entropy);
  if (threadIdx.x == 0) out[blockIdx.x] = sim::effective_rank_finish(total, entropy, info[blockIdx.x] == 0);
}

}  // namespace

void spectral_effective_rank(const double* d_w, const int* d_info, int n, int S, double* d_out) {
  if (S == 0) return;
  spectral_effective_rank_kernel<<<S, row_threads(n)>>>(d_w, d_info, n, d_out);
  check_launch("spectral_effective_rank_kernel");
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
