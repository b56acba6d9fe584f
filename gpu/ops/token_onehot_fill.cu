// The embedding's one-hot input of token ids: the kernel and its launcher, declared with its reference in
// gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void token_onehot_fill_kernel(R* out, int S, const std::uint32_t* samples, int T, int vocab,
                                         std::uint64_t seed, std::uint32_t batch) {
  const std::size_t per = std::size_t(T) * vocab;
  NORMSIM_GRID_LOOP(j, per * S) {
    const std::size_t s = j / per, r = j % per;
    out[j] = R(sim::token_id(seed, samples[s], int(r / vocab), vocab, batch) == int(r % vocab) ? 1 : 0);
  }
}

}  // namespace

template <class R>
void token_onehot_fill(R* d_out, int S, const std::uint32_t* d_samples, int T, int vocab, std::uint64_t seed,
                       std::uint32_t batch) {
  token_onehot_fill_kernel<<<grid_for(std::size_t(S) * T * vocab), kThreads>>>(d_out, S, d_samples, T, vocab,
                                                                               seed, batch);
  check_launch("token_onehot_fill_kernel");
}

NORMSIM_INSTANTIATE_OP(token_onehot_fill)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
