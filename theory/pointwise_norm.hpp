// Gaussian expectations of the pointwise norms DyT (f = tanh) and Derf (f = erf) (sim/pointwise_norm.hpp),
// for their mean field (docs/theory_notes.md "Pointwise norms" [DERIVED]). The norm's input x has, per
// coordinate, token Gram (q, c) and is taken Gaussian (mean 0); u = alpha x + shift.
#pragma once
#include "theory/stack_spec.hpp"

namespace normsim::theory {

struct PointwiseMoments {
  double f1 = 0.0;  // E f(u)
  double f2 = 0.0;  // E f(u)^2
  double ff = 0.0;  // E f(u_t) f(u_s), corr(x_t, x_s) = c / q
  double d1 = 0.0;  // E f'(u)
  double d2 = 0.0;  // E f'(u)^2
  double dd = 0.0;  // E f'(u_t) f'(u_s)
};

// norm: dyt or derf. q >= 0; |c| <= q (clamped). Closed forms for erf's inner Gaussian integrals,
// adaptive Gauss-Kronrod in one dimension, fixed composite Gauss-Legendre for tanh's two-token integrals
// (about 1 ms a call; agreement with the adaptive rule ~1e-15).
PointwiseMoments pointwise_moments(NormKind norm, double alpha, double shift, double q, double c);

}  // namespace normsim::theory
