// ReZero (Bachlechner et al. 2020): x_{k+1} = x_k + alpha F_k(x_k), no norm. At alpha = 0 the stack is
// the identity and every branch weight gradient is 0 (theory.md §2.11).
#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

int step_rezero(StackContext& ctx, int k) {
  const double a = ctx.spec.rezero_alpha;
  residual_step(ctx, k, false, 1.0, a * a);
  return 1;
}

}  // namespace normsim::theory::detail
