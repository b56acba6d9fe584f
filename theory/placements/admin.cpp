// Admin (Liu et al. 2020, Transformer-Clinic code): x_{k+1} = N(omega_k x_k + F_k(x_k)), omega_0 = 1,
// omega_k^2 = omega_{k-1}^2 + mean(F_{k-1}^2) of the same forward pass (docs/conventions.md).
// Mean field: theory.md §2.9 (forward-equivalent to Pre-LN; G^2 = (omega^2 + chi)/(omega^2 + q)).
// branch_scale s multiplies F_k's output, as in the simulator (sim/stack_build.cpp): the branch enters h and
// omega's running sum as s^2 times its Gram, and every map through it gains s^2.
#include <cmath>

#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

int step_admin(StackContext& ctx, int k) {
  const double omega = std::sqrt(ctx.admin_omega_sq);
  const TokenGram x = ctx.x(k);
  const Branch::Eval e = ctx.branch(k).evaluate(x);
  const double s = branch_scale_at(ctx, k);
  const double s2 = s * s;
  const TokenGram h = (omega * omega) * x + s2 * e.out;
  ctx.x(k + 1) = normalized(h, ctx.gamma_sq, ctx.eps);
  const double jac = norm_jacobian(ctx.gamma_sq, h.diag, ctx.eps);  // the norm's backward map
  SublayerRecord& r = ctx.rec(k);
  r.set_branch(x, e);
  r.cross = std::sqrt(ctx.gamma_sq) * omega * x.diag / std::sqrt(h.diag + ctx.eps);
  r.anchor = k + 1, r.back = jac * (GramMap::scale(omega * omega) + s2 * e.back);
  r.anchor_f = k + 1, r.to_branch = GramMap::scale(jac * s2);
  if (!ctx.change
           .empty()) {  // omega is held at its profiled value in the updated pass (sim/cpu/update_pass.hpp)
    const Branch::Tangent tan = ctx.branch(k).tangent(x, e);
    const TokenGram dh =
        (omega * omega) * ctx.change[k] + s2 * (tan.map(ctx.change[k]) + ctx.update_sq * tan.moved);
    ctx.change[k + 1] = jac * dh;
  }
  ctx.admin_omega_sq += s2 * e.out.diag;
  return 1;
}

}  // namespace normsim::theory::detail
