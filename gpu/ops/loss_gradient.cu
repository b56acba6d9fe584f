// DLoss/dy of the readout or mse loss: the kernel and its launcher, declared with its reference in
// gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void loss_gradient_kernel(const R* y, R* dy, int S, const std::uint32_t* samples, int T, int d,
                                     std::uint64_t seed, bool mse, std::uint32_t batch) {
  const std::size_t per = std::size_t(T) * d;
  NORMSIM_GRID_LOOP(j, per * S) {
    const std::size_t s = j / per, r = j % per;
    const int t = int(r / d), i = int(r % d);
    dy[j] = mse ? R(double(y[j]) - sim::target_entry(seed, samples[s], t, i, d, batch))
                : R(sim::readout_entry(seed, samples[s], t, i, d, batch));
  }
}

}  // namespace

template <class R>
void loss_gradient(const R* d_y, R* d_dy, int S, const std::uint32_t* d_samples, int T, int d,
                   std::uint64_t seed, bool mse, std::uint32_t batch) {
  loss_gradient_kernel<<<grid_for(std::size_t(S) * T * d), kThreads>>>(d_y, d_dy, S, d_samples, T, d, seed,
                                                                       mse, batch);
  check_launch("loss_gradient_kernel");
}

NORMSIM_INSTANTIATE_OP(loss_gradient)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
