// No norm: x_{k+1} = x_k + F_k(x_k). Mean field v_{k+1} = v_k + q(v_k), G^2 = 1 + chi(v_k): geometric
// growth for homogeneous branches [DERIVED here, docs/theory_notes.md].
#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

int step_none(StackContext& ctx, int k) {
  residual_step(ctx, k, false, 1.0, 1.0);
  return 1;
}

}  // namespace normsim::theory::detail
