// Update = "random": each sample's scale: the kernel and its launcher, declared with its reference in
// gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

__global__ void random_update_scales_kernel(const double* w_sq, const double* g_sq, double scale,
                                            double* factor, int S) {
  NORMSIM_GRID_LOOP(s, std::size_t(S)) factor[s] = sim::random_update_scale(w_sq[s], g_sq[s], scale);
}

}  // namespace

void random_update_scales(const double* d_w_sq, const double* d_g_sq, double scale, double* d_factor, int S) {
  if (S == 0) return;
  random_update_scales_kernel<<<grid_for(std::size_t(S)), kThreads>>>(d_w_sq, d_g_sq, scale, d_factor, S);
  check_launch("random_update_scales_kernel");
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
