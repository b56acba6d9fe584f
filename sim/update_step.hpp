// The per-entry rules of the parameter updates (the one update, sim/single_update.hpp; the training loop's
// optimizer, sim/training_optimizer.hpp), written once for the CPU's devices and the CUDA backend's kernels
// (gpu/ops.hpp: gradient_step, random_update_scales, adam_accumulate, adam_displace).
#pragma once
#include <cmath>

#include "sim/hd.hpp"

namespace normsim::sim {

// The scalars of one Adam step of one parameter: learning rate, epsilon, the betas, and the bias
// corrections c1 = 1 - b1^t, c2 = 1 - b2^t of step t.
struct AdamStep {
  double lr, eps, b1, b2, c1, c2;
};

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

// One entry of a training step of Adam (Kingma & Ba 2015, Algorithm 1), g the entry's gradient, in two
// halves: adam_moments moves m and v (stored in the backend's precision) to b1 m + (1 - b1) g and
// b2 v + (1 - b2) g^2 as the gradient arrives; adam_displacement is then what the entry loses,
// lr m^ / (sqrt(v^) + eps) with m^ = m / c1, v^ = v / c2, c1 = 1 - b1^t and c2 = 1 - b2^t the bias
// corrections of step t (computed once per step by the caller). At t = 1 this is adam_step up to the
// rounding of m and v (m^ = g, v^ = g^2 exactly in real numbers).
template <class R>
NORMSIM_HD void adam_moments(R g, R& m, R& v, const AdamStep& a) {
  const double gd = double(g);
  m = R(a.b1 * double(m) + (1 - a.b1) * gd);
  v = R(a.b2 * double(v) + (1 - a.b2) * gd * gd);
}
template <class R>
NORMSIM_HD R adam_displacement(R m, R v, const AdamStep& a) {
  return R(a.lr * (double(m) / a.c1) / (std::sqrt(double(v) / a.c2) + a.eps));
}

// update = "random": the factor that gives the Gaussian direction G the norm update_scale ||W||_F, from the
// squared norms of W and G; 0 when G is 0 (no direction).
NORMSIM_HD double random_update_scale(double w_sq, double g_sq, double scale) {
  return g_sq > 0 ? scale * std::sqrt(w_sq) / std::sqrt(g_sq) : 0.0;
}

}  // namespace normsim::sim
