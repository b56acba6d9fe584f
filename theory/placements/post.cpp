// Post-LN (Vaswani et al. 2017): x_{k+1} = N(x_k + F_k(x_k)). Mean field: theory.md §2.1
// (v = gamma^2, G^2 = (1 + chi)/(1 + q), cos(x_k, x_{k+1}) = 1/sqrt(1 + q)).
#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

int step_post(StackContext& ctx, int k) {
  normalized_sum_step(ctx, k, 1.0, false, 1.0);
  return 1;
}

}  // namespace normsim::theory::detail
