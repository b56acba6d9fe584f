// The decoder's encoder output: one fixed T x d token matrix per sample, the same for every layer, from its
// own Philox streams (Stream::encoder_*), shared by every backend:
//   e[t,i] = sqrt(rho) c[i] + sqrt(1 - rho) z[t,i]   (c, z standard normal; rho = encoder_cos)
//   E[t,:] = N(e[t,:])                              (the configured norm, gain norm_gain, eps norm_eps;
//                                                    dyt, derf: final_norm_alpha, final_norm_shift)
// i.e. unit-variance tokens with token correlation rho, normalized as an encoder's final norm leaves them:
// every token has mean square norm_gain^2 (docs/conventions.md, Branches, cross-attention).
#pragma once
#include <cmath>
#include <cstdint>

#include "sim/gaussian.hpp"
#include "sim/hd.hpp"

namespace normsim::sim {

// e[t,i] before the norm.
NORMSIM_HD double encoder_entry(std::uint64_t seed, std::uint32_t sample, int t, int i, int width,
                                double rho) {
  const float c = gaussian_at(DrawKey{seed, sample, 0, Stream::encoder_common}, std::uint64_t(i));
  const float z = gaussian_at(DrawKey{seed, sample, 0, Stream::encoder_tokens},
                              std::uint64_t(t) * std::uint64_t(width) + i);
  return std::sqrt(rho) * double(c) + std::sqrt(1.0 - rho) * double(z);
}

}  // namespace normsim::sim
