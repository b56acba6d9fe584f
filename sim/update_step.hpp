// The per-entry rules of the parameter update (sim/weight_update.hpp), written once for the CPU backend's
// WeightUpdate and the CUDA backend's kernels (gpu/kernels.hpp: gradient_step, random_update_scales).
#pragma once
#include <cmath>

#include "sim/hd.hpp"

namespace normsim::sim {

// What one weight entry loses in a step on its loss gradient g: sgd lr g; Adam's first bias-corrected step
// lr g / (|g| + eps) (Kingma & Ba 2015, Algorithm 1, with m = g and v = g^2 after correction; eps the key
// adam_eps).
template <class R>
NORMSIM_HD R sgd_step(R g, double lr) {
  return g * R(lr);
}
template <class R>
NORMSIM_HD R adam_step(R g, double lr, double eps) {
  return R(lr * double(g) / (std::abs(double(g)) + eps));
}

// update = "random": the factor that gives the Gaussian direction G the norm update_scale ||W||_F, from the
// squared norms of W and G; 0 when G is 0 (no direction).
NORMSIM_HD double random_update_scale(double w_sq, double g_sq, double scale) {
  return g_sq > 0 ? scale * std::sqrt(w_sq) / std::sqrt(g_sq) : 0.0;
}

}  // namespace normsim::sim
