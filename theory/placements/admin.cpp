// Admin (Liu et al. 2020, Transformer-Clinic code): x_{k+1} = N(omega_k x_k + F_k(x_k)), omega_0 = 1,
// omega_k^2 = omega_{k-1}^2 + mean(F_{k-1}^2) of the same forward pass (docs/conventions.md).
// Mean field: theory.md §2.9 (forward-equivalent to Pre-LN; G^2 = (omega^2 + chi)/(omega^2 + q)).
#include <cmath>

#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

int step_admin(StackContext& ctx, int k) {
  normalized_sum_step(ctx, k, std::sqrt(ctx.admin_omega_sq), false, 1.0);
  ctx.admin_omega_sq += ctx.rec(k).branch_sq;
  return 1;
}

}  // namespace normsim::theory::detail
