// X_0 of every sample: the kernel and its launcher, declared with its reference in gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void input_fill_kernel(R* out, int S, const std::uint32_t* samples, int T, int d,
                                  std::uint64_t seed, double input_std, double rho, std::uint32_t batch) {
  const std::size_t per = std::size_t(T) * d;
  NORMSIM_GRID_LOOP(j, per * S) {
    const std::size_t s = j / per, r = j % per;
    out[j] = R(sim::input_entry(seed, samples[s], int(r / d), int(r % d), d, input_std, rho, batch));
  }
}

}  // namespace

template <class R>
void input_fill(R* d_out, int S, const std::uint32_t* d_samples, int T, int d, std::uint64_t seed,
                double input_std, double rho, std::uint32_t batch) {
  input_fill_kernel<<<grid_for(std::size_t(S) * T * d), kThreads>>>(d_out, S, d_samples, T, d, seed,
                                                                    input_std, rho, batch);
  check_launch("input_fill_kernel");
}

NORMSIM_INSTANTIATE_OP(input_fill)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
