// Gaussian expectations of tanh and erf and of their derivatives (see pointwise_norm.hpp).
// Two tokens: x_t = a w + b z1, x_s = sign(c) a w + b z2 with a^2 = |c|, b^2 = q - |c| and w, z1, z2 iid
// N(0, 1), so E F(u_t) G(u_s) = E_w[H_F(w) H_G(sign(c) w)] with H_F(w) = E_z F(alpha (a w + b z) + shift):
// one quadrature inside another, and for erf the inner one in closed form:
//   E_z erf(m + s z) = erf(m / sqrt(1 + 2 s^2)),
//   E_z (2/sqrt(pi)) exp(-(m + s z)^2) = (2/sqrt(pi)) exp(-m^2 / (1 + 2 s^2)) / sqrt(1 + 2 s^2)   [DERIVED].
#include "theory/pointwise_norm.hpp"

#include <algorithm>
#include <boost/math/constants/constants.hpp>
#include <boost/math/quadrature/gauss.hpp>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "theory/gaussian_panels.hpp"
#include "vocab/names.hpp"

namespace normsim::theory {
namespace {

constexpr double kTwoOverSqrtPi = 1.1283791670955126;

// E F(z), z ~ N(0, 1).
template <class F>
double standard_expectation(F f) {
  auto integrand = [&](double z) {
    return f(z) * boost::math::constants::one_div_root_two_pi<double>() * std::exp(-0.5 * z * z);
  };
  const double inf = std::numeric_limits<double>::infinity();
  return boost::math::quadrature::gauss_kronrod<double, 61>::integrate(integrand, -inf, inf, 15, 1e-12);
}

struct Fn {
  bool erf;
  double value(double u) const { return erf ? std::erf(u) : std::tanh(u); }
  double slope(double u) const {
    if (erf) return kTwoOverSqrtPi * std::exp(-u * u);
    const double t = std::tanh(u);
    return 1.0 - t * t;
  }
  // E_z f(m + s z) and E_z f'(m + s z), s >= 0.
  double value_mean(double m, double s) const {
    if (s == 0.0) return value(m);
    if (erf) return std::erf(m / std::sqrt(1.0 + 2.0 * s * s));
    return panel_expectation([&](double z) { return value(m + s * z); }, s);
  }
  double slope_mean(double m, double s) const {
    if (s == 0.0) return slope(m);
    if (erf) {
      const double v = 1.0 + 2.0 * s * s;
      return kTwoOverSqrtPi * std::exp(-m * m / v) / std::sqrt(v);
    }
    return panel_expectation([&](double z) { return slope(m + s * z); }, s);
  }
};

}  // namespace

PointwiseMoments pointwise_moments(NormKind norm, double alpha, double shift, double q, double c) {
  if (!vocab::is_pointwise(norm)) throw std::invalid_argument("pointwise_moments: norm is not dyt or derf");
  const Fn f{norm == NormKind::derf};
  q = std::max(q, 0.0);
  c = std::clamp(c, -q, q);
  PointwiseMoments m;
  const double sd = std::abs(alpha) * std::sqrt(q);     // u = shift + sd z
  m.f1 = shift == 0.0 ? 0.0 : f.value_mean(shift, sd);  // f odd: exactly 0 (a rounding would read as a mean)
  m.d1 = f.slope_mean(shift, sd);
  m.f2 = standard_expectation([&](double z) {
    const double v = f.value(shift + sd * z);
    return v * v;
  });
  m.d2 = standard_expectation([&](double z) {
    const double v = f.slope(shift + sd * z);
    return v * v;
  });
  // Shared and own parts of u_t, u_s: a w + b z.
  const double a = std::abs(alpha) * std::sqrt(std::abs(c)), b = std::abs(alpha) * std::sqrt(q - std::abs(c));
  const double sign = c < 0.0 ? -1.0 : 1.0;  // x_s's shared part is sign(c) a w
  if (a == 0.0) {
    m.ff = m.f1 * m.f1, m.dd = m.d1 * m.d1;
  } else if (b == 0.0 && sign > 0.0) {
    m.ff = m.f2, m.dd = m.d2;
  } else {
    const double sa = alpha < 0.0 ? -a : a;  // u_t = shift + sa w + |alpha| b z1
    const double ss = sign * sa;             // u_s = shift + ss w + |alpha| b z2, the same w
    const auto outer = [&](auto h) {  // erf: the inner integral is closed, an adaptive outer one is cheap
      return f.erf ? standard_expectation(h) : panel_expectation(h, a);
    };
    const auto product = [&](double ht, double w, auto mean) {  // H(w) H(+-w), one inner integral when c > 0
      return ht * (sign > 0.0 ? ht : mean(shift + ss * w, b));
    };
    const auto value = [&](double m0, double s0) { return f.value_mean(m0, s0); };
    const auto slope = [&](double m0, double s0) { return f.slope_mean(m0, s0); };
    m.ff = outer([&](double w) { return product(value(shift + sa * w, b), w, value); });
    m.dd = outer([&](double w) { return product(slope(shift + sa * w, b), w, slope); });
  }
  return m;
}

}  // namespace normsim::theory
