// HybridNorm (Zhuo et al. 2025): attention x_{k+1} = x_k + Attn(x_k) with per-head RMSNorm on Q, K, V;
// MLP x_{k+1} = N(x_k) + F_k(N(x_k)). Mean field: theory.md §2.7 [DERIVED, not numerically checked there]:
// block G^2 = (1 + chi_F)(1 + sigma_O^2 c_g / v) / (v + sigma_O^2 c_x). The V-norm lives in the branch.
#include <cmath>

#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

int step_hybridnorm(StackContext& ctx, int k) {
  if (!ctx.branch(k).is_mlp()) {
    residual_step(ctx, k, false, 1.0, 1.0);
    return 1;
  }
  const TokenGram x = ctx.x(k);
  const TokenGram u = normalized(x, ctx.gamma_sq, ctx.eps);
  const Branch& f = ctx.branch(k);
  const Branch::Eval e = f.evaluate(u);
  const TokenGram out = e.out;
  ctx.x(k + 1) = u + out;
  SublayerRecord& r = ctx.rec(k);
  r.set_branch(u, e);
  r.cross = norm_cross(ctx.gamma_sq, x.diag, ctx.eps);  // x . N(x) / d
  r.anchor = k + 1, r.back = norm_jacobian(ctx.gamma_sq, x.diag, ctx.eps) * (GramMap::identity() + e.back);
  r.anchor_f = k + 1, r.to_branch = 1.0;
  return 1;
}

}  // namespace normsim::theory::detail
