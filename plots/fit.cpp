// Ordinary least squares of ln y on ln x (see fit.hpp). The CI is the textbook one for a slope:
// b +- t_{0.975, n-2} * sqrt(SSR / (n-2) / Sxx), which assumes independent, equal-variance residuals in log
// space; with means over many samples per depth that is a fair first reading, not a guarantee.
#include "fit.hpp"

#include <cmath>
#include <limits>

#include <boost/math/distributions/students_t.hpp>

namespace normsim::plots {

double PowerLawFit::predict(double x) const {
  return std::exp(log_prefactor + exponent * std::log(x));
}

std::optional<PowerLawFit> fit_power_law(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = x.size();
  if (n < 2 || y.size() != n) return std::nullopt;
  double mean_u = 0, mean_v = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!(x[i] > 0) || !(y[i] > 0) || !std::isfinite(x[i]) || !std::isfinite(y[i])) return std::nullopt;
    mean_u += std::log(x[i]);
    mean_v += std::log(y[i]);
  }
  mean_u /= double(n);
  mean_v /= double(n);
  double s_uu = 0, s_uv = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double du = std::log(x[i]) - mean_u;
    s_uu += du * du;
    s_uv += du * (std::log(y[i]) - mean_v);
  }
  if (!(s_uu > 0)) return std::nullopt;

  PowerLawFit fit;
  fit.n = n;
  fit.exponent = s_uv / s_uu;
  fit.log_prefactor = mean_v - fit.exponent * mean_u;
  fit.exponent_ci95 = std::numeric_limits<double>::quiet_NaN();
  if (n > 2) {
    double ssr = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double r = std::log(y[i]) - fit.log_prefactor - fit.exponent * std::log(x[i]);
      ssr += r * r;
    }
    const double dof = double(n - 2);
    const boost::math::students_t t(dof);
    fit.exponent_ci95 = boost::math::quantile(t, 0.975) * std::sqrt(ssr / dof / s_uu);
  }
  return fit;
}

}  // namespace normsim::plots
