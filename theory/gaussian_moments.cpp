// Gaussian moments of activations: closed forms where theory.md §1.1 gives them, Boost.Math quadrature
// elsewhere. See gaussian_moments.hpp for the definitions.
#include "theory/gaussian_moments.hpp"

#include <algorithm>
#include <array>
#include <boost/math/constants/constants.hpp>
#include <boost/math/quadrature/gauss.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace normsim::theory {
namespace {

constexpr double kPi = 3.14159265358979323846;

void require_pointwise(Activation a) {
  if (a == Activation::swiglu) {
    throw std::invalid_argument("gaussian moments: swiglu is not pointwise; use branch_gains.hpp");
  }
}

// E f(z), z ~ N(0, s), by adaptive Gauss-Kronrod on the whole line; the integrands are smooth except
// at 0 for relu, which never reaches this path.
template <class F>
double gaussian_expectation(F f, double s) {
  const double sd = std::sqrt(s);
  auto integrand = [&](double x) {
    return f(sd * x) * boost::math::constants::one_div_root_two_pi<double>() * std::exp(-0.5 * x * x);
  };
  const double inf = std::numeric_limits<double>::infinity();
  return boost::math::quadrature::gauss_kronrod<double, 61>::integrate(integrand, -inf, inf, 15, 1e-14);
}

// GELU closed forms [DERIVED, theory.md §1.1]: r = s/(1+s), a = arcsin r.
double gelu_m2(double s) {
  const double r = s / (1.0 + s), a = std::asin(r), w = std::sqrt(1.0 - r * r);
  const double t = s / (1.0 + 2.0 * s);
  const double bracket = 0.25 + a / (2 * kPi) + r * w / (2 * kPi) + r / 4 + r * a / (2 * kPi) + w / (2 * kPi);
  return t * t * 2.0 * (1.0 + s) * bracket + t * (0.25 + a / (2 * kPi));
}

double gelu_d2(double s) {
  const double a = std::asin(s / (1.0 + s));
  return 0.25 + a / (2 * kPi) + s / (kPi * (1.0 + s) * std::sqrt(1.0 + 2.0 * s)) +
         s / (2 * kPi * std::pow(1.0 + 2.0 * s, 1.5));
}

double gelu_mean(double s) {
  return s / std::sqrt(2 * kPi * (1.0 + s));
}

// Dual-activation coefficients c_n^2 for n < kTerms. 96 terms leave a tail below 1e-10 of M2 for
// gelu/silu/tanh at s <= 4 (checked in tests/theory against M2); the quadrature covers |x| <= 26, past
// the turning point sqrt(4n+2) of the last normalized Hermite function.
constexpr int kTerms = 96;

// One node of the quadrature below with what does not depend on s: x, its weight, exp(-x^2/2) and the
// normalized probabilists' Hermite functions h_n(x) = He_n(x) / sqrt(n!), n < kTerms.
struct HermiteNode {
  double x, w, gauss;
  std::array<double, kTerms> h;
};

HermiteNode hermite_node(double x, double w) {
  HermiteNode q{x, w, std::exp(-0.5 * x * x), {}};
  q.h[0] = 1.0;  // by their stable recurrence
  q.h[1] = x;
  for (int n = 1; n + 1 < kTerms; ++n)
    q.h[n + 1] = (x * q.h[n] - std::sqrt(double(n)) * q.h[n - 1]) / std::sqrt(n + 1.0);
  return q;
}

// Composite 20-point Gauss-Legendre on |x| <= 26 (104 panels of 0.5), in the order the sums run. Built once
// per process: each GaussianKernel of a smooth activation (one per input scale: a placement without a norm
// in front of its branches needs one per layer) spent almost all its time on the recurrence's square roots
// and divisions, 86 % of a W1 sweep's host time with the CUDA backend (perf, 2026-11-28); only the
// activation depends on s.
const std::vector<HermiteNode>& hermite_nodes() {
  static const std::vector<HermiteNode> nodes = [] {
    using Rule = boost::math::quadrature::gauss<double, 20>;
    const auto& abscissae = Rule::abscissa();
    const auto& weights = Rule::weights();
    const double lo = -26.0, panel = 0.5;
    const int panels = 104;
    std::vector<HermiteNode> out;
    for (int p = 0; p < panels; ++p) {
      const double mid = lo + (p + 0.5) * panel, half = 0.5 * panel;
      for (std::size_t i = 0; i < abscissae.size(); ++i) {
        if (abscissae[i] == 0.0) {
          out.push_back(hermite_node(mid, half * weights[i]));
        } else {
          out.push_back(hermite_node(mid + half * abscissae[i], half * weights[i]));
          out.push_back(hermite_node(mid - half * abscissae[i], half * weights[i]));
        }
      }
    }
    return out;
  }();
  return nodes;
}

std::vector<double> hermite_coefficients_sq(Activation act, double s) {
  const double sd = std::sqrt(s);
  std::vector<double> c(kTerms, 0.0);
  for (const HermiteNode& q : hermite_nodes()) {
    const double fw =
        q.w * activate(act, sd * q.x) * boost::math::constants::one_div_root_two_pi<double>() * q.gauss;
    for (int n = 0; n < kTerms; ++n) c[n] += fw * q.h[n];
  }
  for (double& v : c) v *= v;
  return c;
}

double horner(const std::vector<double>& coeff, double x) {
  double acc = 0.0;
  for (auto it = coeff.rbegin(); it != coeff.rend(); ++it) acc = acc * x + *it;
  return acc;
}

}  // namespace

GaussianKernel::GaussianKernel(Activation a, double s) : act_(a), s_(s) {
  require_pointwise(a);
  if (!(s >= 0.0) || !std::isfinite(s))
    throw std::invalid_argument("gaussian moments: variance must be >= 0");
  switch (a) {
    case Activation::relu:  // Cho & Saul 2009 arc-cosine kernel, degree 1
      m2_ = s / 2, d2_ = 0.5, mean_ = std::sqrt(s / (2 * kPi));
      return;
    case Activation::linear:
      m2_ = s, d2_ = 1.0, mean_ = 0.0;
      return;
    case Activation::gelu:
      m2_ = gelu_m2(s), d2_ = gelu_d2(s), mean_ = gelu_mean(s);
      break;
    default:
      m2_ = gaussian_expectation([a](double z) { return activate(a, z) * activate(a, z); }, s);
      d2_ = gaussian_expectation(
          [a](double z) { return activate_derivative(a, z) * activate_derivative(a, z); }, s);
      mean_ = a == Activation::tanh ? 0.0 : gaussian_expectation([a](double z) { return activate(a, z); }, s);
  }
  if (s == 0.0) {  // phi(0) is constant: every kernel is flat
    c2_ = {1.0};
    dc2_ = {1.0};
    return;
  }
  c2_ = hermite_coefficients_sq(a, s);
  dc2_.assign(c2_.size() - 1, 0.0);
  double sum = 0.0, dsum = 0.0;
  for (std::size_t n = 0; n < c2_.size(); ++n) sum += c2_[n];
  for (std::size_t n = 1; n < c2_.size(); ++n) {
    dc2_[n - 1] = n * c2_[n];
    dsum += dc2_[n - 1];
  }
  // Normalizing by the truncated sums makes kappa(1) = dkappa(1) = 1 exactly.
  for (double& v : c2_) v /= sum;
  for (double& v : dc2_) v /= dsum;
}

double GaussianKernel::kappa(double rho) const {
  rho = std::clamp(rho, -1.0, 1.0);
  switch (act_) {
    case Activation::relu:  // Cho & Saul 2009; theory.md §1.1
      return (std::sqrt(1.0 - rho * rho) + (kPi - std::acos(rho)) * rho) / kPi;
    case Activation::linear:
      return rho;
    default:
      return horner(c2_, rho);
  }
}

double GaussianKernel::dkappa(double rho) const {
  rho = std::clamp(rho, -1.0, 1.0);
  switch (act_) {
    case Activation::relu:  // P(z > 0, z' > 0) / P(z > 0) (Sheppard's formula)
      return (kPi - std::acos(rho)) / kPi;
    case Activation::linear:
      return 1.0;
    default:
      return horner(dc2_, rho);
  }
}

GaussianKernel::Pair GaussianKernel::kappas(double rho) const {
  if (act_ == Activation::relu) return relu_kappas(rho);
  rho = std::clamp(rho, -1.0, 1.0);
  switch (act_) {
    case Activation::linear:
      return {rho, 1.0};
    default:
      return {horner(c2_, rho), horner(dc2_, rho)};
  }
}

double gaussian_m2(Activation a, double s) {
  return GaussianKernel(a, s).m2();
}
double gaussian_d2(Activation a, double s) {
  return GaussianKernel(a, s).d2();
}
double gaussian_mean(Activation a, double s) {
  return GaussianKernel(a, s).mean();
}
double gaussian_kappa(Activation a, double s, double rho) {
  return GaussianKernel(a, s).kappa(rho);
}
double gaussian_dkappa(Activation a, double s, double rho) {
  return GaussianKernel(a, s).dkappa(rho);
}

}  // namespace normsim::theory
