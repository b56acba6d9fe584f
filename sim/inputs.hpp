// The random inputs of a sample, as pure functions of (seed, sample, index), shared by every backend:
//   input  x_0[t,i] = input_std * (sqrt(rho) c[i] + sqrt(1 - rho) z[t,i]),  rho = input_corr
//          (c and z standard normal; tokens are equicorrelated with correlation rho)
//   token  id_t uniform in [0, V) (vocab = V > 0, the embedding's input; sim/edges.hpp)
//   readout gradient g[t,i] ~ N(0,1)  (loss = sum g * y);   mse target[t,i] ~ N(0,1)  (loss = 1/2 |y -
//   target|^2)
// `batch` is the Philox layer word of all three (the training step's batch, sim/cpu/train_loop.hpp; 0 is the
// one batch of a run without steps).
#pragma once
#include <cmath>
#include <cstdint>

#include "sim/gaussian.hpp"
#include "sim/hd.hpp"

namespace normsim::sim {

NORMSIM_HD double input_entry(std::uint64_t seed, std::uint32_t sample, int t, int i, int width,
                              double input_std, double rho, std::uint32_t batch = 0) {
  const float c = gaussian_at(DrawKey{seed, sample, batch, Stream::input_common}, std::uint64_t(i));
  const float z = gaussian_at(DrawKey{seed, sample, batch, Stream::input_tokens},
                              std::uint64_t(t) * std::uint64_t(width) + i);
  return input_std * (std::sqrt(rho) * double(c) + std::sqrt(1.0 - rho) * double(z));
}

// Token t's id: the 32 bits of Philox entry t mapped to [0, V) by a multiply and a shift (Lemire, "Fast
// random integer generation in an interval", ACM TOMACS 2019), whose bias, at most V / 2^32 per id, is far
// below any statistic normsim reports.
NORMSIM_HD int token_id(std::uint64_t seed, std::uint32_t sample, int t, int vocab, std::uint32_t batch = 0) {
  const Philox4 r = philox4x32_10(philox_counter(std::uint32_t(t) >> 2, Stream::token_ids, batch, sample),
                                  std::uint32_t(seed), std::uint32_t(seed >> 32));
  return int((std::uint64_t(r.v[t & 3]) * std::uint64_t(vocab)) >> 32);
}

NORMSIM_HD double readout_entry(std::uint64_t seed, std::uint32_t sample, int t, int i, int width,
                                std::uint32_t batch = 0) {
  return gaussian_at(DrawKey{seed, sample, batch, Stream::readout},
                     std::uint64_t(t) * std::uint64_t(width) + i);
}

NORMSIM_HD double target_entry(std::uint64_t seed, std::uint32_t sample, int t, int i, int width,
                               std::uint32_t batch = 0) {
  return gaussian_at(DrawKey{seed, sample, batch, Stream::target},
                     std::uint64_t(t) * std::uint64_t(width) + i);
}

}  // namespace normsim::sim
