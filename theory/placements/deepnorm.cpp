// DeepNorm (Wang et al. 2022, DeepNet §4.1): x_{k+1} = N(alpha x_k + F_k(x_k)); beta is already in the
// spec's gains. Mean field: theory.md §2.8 (G^2 = (alpha^2 + chi_beta)/(alpha^2 + q_beta)).
#include <cmath>

#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

int step_deepnorm(StackContext& ctx, int k) {
  // docs/conventions.md: alpha = K^(1/4) in sublayers, the same number as DeepNet's (2N)^(1/4).
  const double alpha = ctx.spec.deepnorm_alpha.value_or(std::pow(double(ctx.spec.depth), 0.25));
  normalized_sum_step(ctx, k, alpha, false, 1.0);
  return 1;
}

}  // namespace normsim::theory::detail
