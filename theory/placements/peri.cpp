// Peri-LN / Sandwich-LN (Kim et al. 2025; CogView): x_{k+1} = x_k + N(F_k(N(x_k))). Mean field:
// theory.md §2.3 (v_{k+1} = v_k + gamma^2 whatever the branch scale, G^2 = 1 + gamma^2 (chi/q) / v_k), as
// eps -> 0; with the norms' eps, v_{k+1} = v_k + gamma^2 q / (q + eps) (docs/theory_notes.md §eps).
#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

int step_peri(StackContext& ctx, int k) {
  const TokenGram x = ctx.x(k);
  const TokenGram u = normalized(x, ctx.gamma_sq, ctx.eps);
  const Branch& f = ctx.branch(k);
  const Branch::Eval e = f.evaluate(u);
  const TokenGram out = e.out;
  ctx.x(k + 1) = x + normalized(out, ctx.gamma_sq, ctx.eps);
  const double out_jac = norm_jacobian(ctx.gamma_sq, out.diag, ctx.eps);
  const double in_jac = norm_jacobian(ctx.gamma_sq, x.diag, ctx.eps);
  SublayerRecord& r = ctx.rec(k);
  r.set_branch(u, e);
  r.cross = x.diag;
  r.anchor = k + 1, r.back = GramMap::identity() + (in_jac * out_jac) * e.back;
  r.anchor_f = k + 1, r.to_branch = out_jac;
  return 1;
}

}  // namespace normsim::theory::detail
