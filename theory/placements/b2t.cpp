// B2T connection (Takase et al. 2022, takase/b2t_connection): x_{2j+1} = N(x_{2j} + F_{2j}(x_{2j}));
// x_{2j+2} = N(x_{2j+1} + F_{2j+1}(x_{2j+1}) + x_{2j}). Mean field: theory.md §2.5 [DERIVED]:
// ||z||^2/d = 2 + q_F + 2/sqrt(1+q_A), G^2 = [1 + (1+chi_A)(1+chi_F)/(1+q_A) + 2/sqrt(1+q_A)] / ||z||^2/d,
// here with general gamma and input scale. The bottom skip makes x_{2j}'s gradient depend on x_{2j+2}'s
// directly, and its cross term with the path through x_{2j+1} does not vanish: x_{2j+1} . x_{2j} != 0.
#include <cmath>

#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

int step_b2t(StackContext& ctx, int k) {
  const double g = std::sqrt(ctx.gamma_sq);
  const TokenGram x0 = ctx.x(k);
  const Branch& fa = ctx.branch(k);
  const Branch::Eval e0 = fa.evaluate(x0);
  const TokenGram out0 = e0.out;
  const TokenGram h0 = x0 + out0;
  const TokenGram x1 = normalized(h0, ctx.gamma_sq, ctx.eps);
  const double link = g / std::sqrt(h0.diag + ctx.eps);  // x1 = link * h0 per token; x1 . x0 = link * x0 . x0
  const Branch& ff = ctx.branch(k + 1);
  const Branch::Eval e1 = ff.evaluate(x1);
  const TokenGram out1 = e1.out;
  const TokenGram z = x1 + out1 + x0 + (2.0 * link) * x0;
  ctx.x(k + 1) = x1;
  ctx.x(k + 2) = normalized(z, ctx.gamma_sq, ctx.eps);
  const double jac_z = norm_jacobian(ctx.gamma_sq, z.diag, ctx.eps);
  const double jac_h = norm_jacobian(ctx.gamma_sq, h0.diag, ctx.eps);
  const GramMap through_f1 = GramMap::identity() + e1.back;
  const GramMap through_f0 = GramMap::identity() + e0.back;

  SublayerRecord& r0 = ctx.rec(k);
  r0.set_branch(x0, e0);
  r0.cross = link * x0.diag;
  r0.anchor = k + 2;
  r0.back = jac_z * (GramMap::identity() + jac_h * (through_f0 * through_f1) + GramMap::scale(2.0 * link));
  r0.anchor_f = k + 1, r0.to_branch = jac_h;

  SublayerRecord& r1 = ctx.rec(k + 1);
  r1.set_branch(x1, e1);
  r1.cross = g * (x1.diag + link * x0.diag) / std::sqrt(z.diag + ctx.eps);
  r1.anchor = k + 2, r1.back = jac_z * through_f1;
  r1.anchor_f = k + 2, r1.to_branch = jac_z;
  return 2;
}

}  // namespace normsim::theory::detail
