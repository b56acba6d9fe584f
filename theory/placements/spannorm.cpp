// SpanNorm, our reading of the abstract (Wang et al. 2026; equations UNCONFIRMED, theory.md §2.6):
// x_{2j+1} = x_{2j} + lambda F_{2j}(N(x_{2j})); x_{2j+2} = N(x_{2j+1} + lambda F_{2j+1}(N(x_{2j+1}))).
// Each half is a Pre-LN or a normalized-sum step with lambda^2 on the branch [DERIVED].
#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

int step_spannorm(StackContext& ctx, int k) {
  const double l2 = ctx.spec.spannorm_lambda * ctx.spec.spannorm_lambda;
  residual_step(ctx, k, true, 1.0, l2);
  normalized_sum_step(ctx, k + 1, 1.0, true, l2);
  return 2;
}

}  // namespace normsim::theory::detail
