// The training loop's Adam: the moments, then the displacement: the kernel and its launcher, declared with
// its reference in gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void adam_accumulate_kernel(const R* g, R* m, R* v, std::size_t n, double mult, sim::AdamStep a) {
  const R factor = R(mult);
  NORMSIM_GRID_LOOP(i, n) sim::adam_moments(R(g[i] * factor), m[i], v[i], a);
}

template <class R>
__global__ void adam_displace_kernel(R* disp, const R* m, const R* v, std::size_t n, double mult,
                                     sim::AdamStep a) {
  const R factor = R(mult);
  NORMSIM_GRID_LOOP(i, n) disp[i] -= sim::adam_displacement(m[i], v[i], a) * factor;
}

}  // namespace

template <class R>
void adam_accumulate(const R* d_g, R* d_m, R* d_v, std::size_t n, double mult, sim::AdamStep a) {
  if (n == 0) return;
  adam_accumulate_kernel<<<grid_for(n), kThreads>>>(d_g, d_m, d_v, n, mult, a);
  check_launch("adam_accumulate_kernel");
}

template <class R>
void adam_displace(R* d_disp, const R* d_m, const R* d_v, std::size_t n, double mult, sim::AdamStep a) {
  if (n == 0) return;
  adam_displace_kernel<<<grid_for(n), kThreads>>>(d_disp, d_m, d_v, n, mult, a);
  check_launch("adam_displace_kernel");
}

NORMSIM_INSTANTIATE_OP(adam_accumulate)
NORMSIM_INSTANTIATE_OP(adam_displace)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
