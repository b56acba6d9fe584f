// DeepNorm (Wang et al. 2022, DeepNet §4.1): x_{k+1} = N(alpha x_k + F_k(x_k)); beta is already in the
// spec's gains. Mean field: theory.md §2.8 (G^2 = (alpha^2 + chi_beta)/(alpha^2 + q_beta)).
#include <cmath>

#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

double deepnorm_alpha(const StackSpec& spec) {
  // docs/conventions.md: alpha = K^(1/4) in sublayers, the same number as DeepNet's (2N)^(1/4).
  return spec.deepnorm_alpha ? *spec.deepnorm_alpha : std::pow(double(spec.depth), 0.25);
}

int step_deepnorm(StackContext& ctx, int k) {
  normalized_sum_step(ctx, k, ctx.deepnorm_alpha, false, 1.0);  // ctx.deepnorm_alpha = deepnorm_alpha(spec)
  return 1;
}

}  // namespace normsim::theory::detail
