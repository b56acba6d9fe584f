// Branch gains from the Gaussian moments; formulas and sources in branch_gains.hpp.
#include "theory/branch_gains.hpp"

#include <stdexcept>

#include "theory/gaussian_moments.hpp"

namespace normsim::theory {

BranchGains mlp_gains(Activation act, double sigma1_sq, double sigma2_sq, double m) {
  if (act == Activation::swiglu) return swiglu_gains(sigma1_sq, sigma1_sq, sigma2_sq, m);
  const GaussianKernel k(act, sigma1_sq * m);
  return {sigma2_sq * k.m2(), sigma1_sq * sigma2_sq * k.d2()};
}

BranchGains swiglu_gains(double sigma_gate_sq, double sigma1_sq, double sigma2_sq, double m) {
  const GaussianKernel k(Activation::silu, sigma_gate_sq * m);
  const double up = sigma1_sq * m;  // variance of the linear ("up") pre-activation
  return {sigma2_sq * k.m2() * up, sigma2_sq * (sigma_gate_sq * up * k.d2() + sigma1_sq * k.m2())};
}

BranchGains attention_gains(double sigma_a_sq, double c_x, double c_g, double m) {
  return {sigma_a_sq * c_x * m, sigma_a_sq * c_g};
}

double uniform_coherence(double rho, int tokens) {
  if (tokens < 1) throw std::invalid_argument("uniform_coherence: tokens must be >= 1");
  return rho + (1.0 - rho) / tokens;
}

double mlp_kappa(Activation act, double sigma1_sq, double rho, double m) {
  if (act == Activation::swiglu) return swiglu_kappa(sigma1_sq, rho, m);
  return GaussianKernel(act, sigma1_sq * m).kappa(rho);
}

double swiglu_kappa(double sigma_gate_sq, double rho, double m) {
  return GaussianKernel(Activation::silu, sigma_gate_sq * m).kappa(rho) * rho;
}

}  // namespace normsim::theory
