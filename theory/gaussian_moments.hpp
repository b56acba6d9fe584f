// Gaussian expectations of a pointwise activation, the inputs of every branch gain (theory.md §1.1):
// z ~ N(0, s), M2 = E phi(z)^2, D2 = E phi'(z)^2, mean = E phi(z), and the two-point kernels at unit
// correlation rho (z, z' each N(0, s), corr(z, z') = rho).
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "theory/activation.hpp"

namespace normsim::theory {

// One-off evaluations. swiglu is not pointwise and throws std::invalid_argument (use branch_gains.hpp).
double gaussian_m2(Activation a, double s);
double gaussian_d2(Activation a, double s);
double gaussian_mean(Activation a, double s);
// kappa(rho) = E[phi(z) phi(z')] / M2; kappa(0) = mean^2 / M2, kappa(1) = 1, kappa'(1) = s D2 / M2.
double gaussian_kappa(Activation a, double s, double rho);
// Derivative kernel E[phi'(z) phi'(z')] / D2: how a branch correlates the gradients of two tokens.
double gaussian_dkappa(Activation a, double s, double rho);

// The same quantities for one (activation, s), precomputed so that kappa costs a polynomial evaluation.
// Smooth activations use the dual-activation (Hermite) series E[phi(z)phi(z')] = sum_n c_n^2 rho^n,
// c_n = E[phi(sqrt(s) x) He_n(x)] / sqrt(n!) (Daniely, Frostig & Singer 2016, "Toward deeper
// understanding of neural networks", §4), and Price's theorem d/drho E[phi phi'] = s E[phi' phi'] for
// the derivative kernel. ReLU and linear use closed forms.
class GaussianKernel {
 public:
  GaussianKernel(Activation a, double s);

  Activation activation() const { return act_; }
  double variance() const { return s_; }
  double m2() const { return m2_; }
  double d2() const { return d2_; }
  double mean() const { return mean_; }
  double kappa(double rho) const;
  double dkappa(double rho) const;
  // kappa and dkappa together (one arccos for relu).
  struct Pair {
    double kappa, dkappa;
  };
  Pair kappas(double rho) const;
  // Unnormalized E[phi(z) phi(z')] = M2 kappa(rho).
  double covariance(double rho) const { return m2_ * kappa(rho); }

 private:
  Activation act_;
  double s_;
  double m2_ = 0.0, d2_ = 0.0, mean_ = 0.0;
  std::vector<double> c2_;   // c_n^2 / sum c_n^2: kappa's power-series coefficients
  std::vector<double> dc2_;  // n c_n^2 / sum n c_n^2, shifted by one: dkappa's coefficients
};

// ReLU's kernels, shared by GaussianKernel and the mean field's per-layer fast path (one arccos):
// kappa = (sqrt(1 - rho^2) + (pi - acos rho) rho) / pi (Cho & Saul 2009, theory.md §1.1) and
// dkappa = (pi - acos rho) / pi = P(z > 0, z' > 0) / P(z > 0) (Sheppard's formula). Neither depends on s.
inline GaussianKernel::Pair relu_kappas(double rho) {
  constexpr double kPi = 3.14159265358979323846;
  rho = std::clamp(rho, -1.0, 1.0);
  const double a = std::acos(rho);
  return {(std::sqrt(1.0 - rho * rho) + (kPi - a) * rho) / kPi, (kPi - a) / kPi};
}

}  // namespace normsim::theory
