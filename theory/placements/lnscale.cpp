// LayerNorm Scaling (Sun et al. 2025, Eq. 12): x_{k+1} = x_k + F_k(N(x_k) / sqrt(b(k) + 1)).
// Mean field: theory.md §2.10 (ReLU: v = v0 + q H_L, G^2 = 1 + chi(b) / ((b + 1) v)).
#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

int step_lnscale(StackContext& ctx, int k) {
  residual_step(ctx, k, true, 1.0 / (block_of(ctx.spec, k) + 1.0), 1.0);
  return 1;
}

}  // namespace normsim::theory::detail
