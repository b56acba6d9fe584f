// Moments of sigmoid(z) for the attention output gate (attention_gate.hpp). Two tokens: z_a = a w + b z1,
// z_b = sign(rho) a w + b z2 with a^2 = |rho| s, b^2 = (1 - |rho|) s and w, z1, z2 iid N(0, 1), so
// E f(z_a) f(z_b) = E_w[H(w) H(sign(rho) w)] with H(w) = E_z f(a w + b z), as theory/pointwise_norm.cpp.
#include "theory/attention_gate.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "theory/gaussian_panels.hpp"

namespace normsim::theory {
namespace {

double sigmoid(double z) {
  return 1.0 / (1.0 + std::exp(-z));
}
double sigmoid_slope(double z) {
  const double g = sigmoid(z);
  return g * (1.0 - g);
}

// E_z f(m + b z).
template <class F>
double inner(F f, double m, double b) {
  if (b == 0.0) return f(m);
  return panel_expectation([&](double z) { return f(m + b * z); }, b);
}

// E f(z)^2 and E f(z_a) f(z_b) for one f.
template <class F>
void two_point(F f, double s, double rho, double& same, double& pair) {
  const double root = std::sqrt(s);
  same = panel_expectation([&](double z) { return f(root * z) * f(root * z); }, root);
  const double c = std::abs(rho), a = std::sqrt(c * s), b = std::sqrt((1.0 - c) * s);
  const double sign = rho < 0.0 ? -1.0 : 1.0;
  pair = panel_expectation(
      [&](double w) {
        const double h = inner(f, a * w, b);
        return h * (sign > 0.0 ? h : inner(f, -a * w, b));
      },
      std::max(a, 1e-300));
}

}  // namespace

GateMoments sigmoid_gate_moments(double s, double rho) {
  if (!(s >= 0.0) || !std::isfinite(s)) throw std::invalid_argument("gate moments: variance must be >= 0");
  rho = std::clamp(rho, -1.0, 1.0);
  GateMoments m;
  if (s == 0.0) return {0.25, 0.25, 1.0 / 16.0, 1.0 / 16.0};
  two_point(sigmoid, s, rho, m.s2, m.s11);
  two_point(sigmoid_slope, s, rho, m.d2, m.d11);
  return m;
}

}  // namespace normsim::theory
