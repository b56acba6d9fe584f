// The MLP activation over blocks of a CPU matrix. In float32, GELU is vectorised: z Phi(z) with the normal
// CDF from the Chebyshev-fitted erfc of Numerical Recipes (Press et al., 2nd ed., §6.2: relative error below
// 1.2e-7 everywhere, so no cancellation for negative z) and Eigen's vectorised exp;
// tests/sim/test_activations_vec.cpp measures its error against erf and exp in double. In float64 and for
// the other activations, activate() entry by entry: the scalar definitions the CUDA kernels share
// (activations.hpp).
#pragma once
#include <Eigen/Core>
#include <type_traits>

#include "sim/activations.hpp"

namespace normsim::sim {

// Phi(z) = P(N(0,1) <= z) for every entry of a float array: 0.5 erfc(|z| / sqrt 2) is the tail.
template <class X>
Eigen::ArrayXXf normal_cdf(const Eigen::ArrayBase<X>& z) {
  const Eigen::ArrayXXf x = z.abs() * 0.70710678118654752f, t = 1.0f / (1.0f + 0.5f * x);
  Eigen::ArrayXXf p = t * 0.17087277f - 0.82215223f;
  for (const float c :
       {1.48851587f, -1.13520398f, 0.27886807f, -0.18628806f, 0.09678418f, 0.37409196f, 1.00002368f})
    p = p * t + c;
  const Eigen::ArrayXXf tail = 0.5f * t * (p * t - 1.26551223f - x * x).exp();
  return (z < 0.0f).select(tail, 1.0f - tail);
}

// out = act(z).
template <class In, class Out>
void activate_block(Activation a, const Eigen::MatrixBase<In>& z, Out&& out) {
  using R = typename In::Scalar;
  if constexpr (std::is_same_v<R, float>) {
    if (a == Activation::gelu) {
      out.array() = z.array() * normal_cdf(z.array());
      return;
    }
  }
  out = z.unaryExpr([a](R v) { return activate(a, v); });
}

// d = d * act'(z), entry by entry. GELU' = Phi(z) + z phi(z).
template <class In, class Out>
void multiply_by_derivative(Activation a, const Eigen::MatrixBase<In>& z, Out&& d) {
  using R = typename In::Scalar;
  if constexpr (std::is_same_v<R, float>) {
    if (a == Activation::gelu) {
      const auto x = z.array();
      d.array() *= normal_cdf(x) + x * (0.39894228040143268f * (-0.5f * x * x).exp());
      return;
    }
  }
  d = d.cwiseProduct(z.unaryExpr([a](R v) { return activate_derivative(a, v); }));
}

}  // namespace normsim::sim
