// Pre-LN (Xiong et al. 2020): x_{k+1} = x_k + F_k(N(x_k)). Mean field: theory.md §2.2 and §3(a)
// (v_{k+1} = v_k + q, G^2 = 1 + chi / v_k).
#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

int step_pre(StackContext& ctx, int k) {
  residual_step(ctx, k, true, 1.0, 1.0);
  return 1;
}

}  // namespace normsim::theory::detail
