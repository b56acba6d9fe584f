// Standard normal draws from Philox output by the Box-Muller transform, in float for every precision so
// that float32 and float64 runs use identical weights (their difference is then arithmetic alone).
// Uniforms keep 24 bits: u1 in (0, 1] (log finite), so |z| <= sqrt(-2 ln 2^-24) = 5.77; the mass the
// Gaussian has beyond that, 8e-9, is far below any statistic normsim reports.
#pragma once
#include <cmath>
#include <cstdint>

#include "sim/hd.hpp"
#include "sim/philox.hpp"

namespace normsim::sim {

NORMSIM_HD float uniform_open0(std::uint32_t x) {
  return float((x >> 8) + 1u) * 5.9604645e-08f;
}  // (0,1]
NORMSIM_HD float uniform_closed0(std::uint32_t x) {
  return float(x >> 8) * 5.9604645e-08f;
}  // [0,1)

// Four standard normals from one Philox block: Box-Muller on (v0, v1) and on (v2, v3).
NORMSIM_HD void box_muller4(const Philox4& r, float out[4]) {
  constexpr float kTwoPi = 6.2831853071795864f;
  const float r01 = std::sqrt(-2.0f * std::log(uniform_open0(r.v[0])));
  const float t01 = kTwoPi * uniform_closed0(r.v[1]);
  const float r23 = std::sqrt(-2.0f * std::log(uniform_open0(r.v[2])));
  const float t23 = kTwoPi * uniform_closed0(r.v[3]);
  out[0] = r01 * std::cos(t01);
  out[1] = r01 * std::sin(t01);
  out[2] = r23 * std::cos(t23);
  out[3] = r23 * std::sin(t23);
}

struct DrawKey {
  std::uint64_t seed;
  std::uint32_t sample;
  std::uint32_t layer;
  Stream stream;
};

// Entries 4 block .. 4 block + 3 of the draw identified by `key`: one Philox block.
NORMSIM_HD void gaussian_block(const DrawKey& key, std::uint32_t block, float z[4]) {
  const Philox4 r = philox4x32_10(philox_counter(block, key.stream, key.layer, key.sample),
                                  std::uint32_t(key.seed), std::uint32_t(key.seed >> 32));
  box_muller4(r, z);
}

// Entry `index` of the draw identified by `key` (a pure function; used by tests and GPU kernels).
NORMSIM_HD float gaussian_at(const DrawKey& key, std::uint64_t index) {
  float z[4];
  gaussian_block(key, std::uint32_t(index >> 2), z);
  return z[index & 3];
}

}  // namespace normsim::sim
