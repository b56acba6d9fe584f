// Per-sample line fits and the power-law / exponential comparison (see growth.hpp).
#include "stats/growth.hpp"

#include <cmath>
#include <limits>
#include <set>

namespace normsim::stats {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct SampleLine {
  double slope = kNaN, intercept = kNaN, ssr = kNaN;
};

// Least squares of t(y) on t(x) over one sample's usable points; NaN slope when fewer than two distinct x.
SampleLine sample_line(std::span<const double> x, const std::vector<double>& y, bool log_x, bool log_y) {
  std::vector<double> a, b;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    const double u = log_x ? std::log(x[i]) : x[i], v = log_y ? std::log(y[i]) : y[i];
    if (std::isfinite(u) && std::isfinite(v)) a.push_back(u), b.push_back(v);
  }
  SampleLine line;
  const double slope = ols_slope(a, b);
  if (!std::isfinite(slope)) return line;
  double ma = 0, mb = 0;
  for (std::size_t i = 0; i < a.size(); ++i) ma += a[i], mb += b[i];
  ma /= double(a.size()), mb /= double(a.size());
  line.slope = slope;
  line.intercept = mb - slope * ma;
  line.ssr = 0;
  for (std::size_t i = 0; i < a.size(); ++i) line.ssr += std::pow(b[i] - line.intercept - slope * a[i], 2);
  return line;
}

std::size_t distinct_count(std::span<const double> x) {
  return std::set<double>(x.begin(), x.end()).size();
}

}  // namespace

std::optional<LineFit> fit_lines(std::span<const double> x,
                                 const std::vector<std::vector<double>>& per_sample, bool log_x, bool log_y,
                                 double confidence) {
  std::vector<double> slopes, intercepts;
  for (const auto& y : per_sample)
    if (const SampleLine l = sample_line(x, y, log_x, log_y); std::isfinite(l.slope))
      slopes.push_back(l.slope), intercepts.push_back(l.intercept);
  if (slopes.empty()) return std::nullopt;
  LineFit fit;
  fit.slope = mean_ci(slopes, confidence);
  fit.intercept = mean_ci(intercepts, confidence).value;
  return fit;
}

double GrowthFit::predict(double x) const {
  return std::exp(line.predict(model == Growth::power_law ? std::log(x) : x));
}

std::optional<GrowthFit> fit_growth(std::span<const double> x,
                                    const std::vector<std::vector<double>>& per_sample, Growth model,
                                    double confidence) {
  const auto line = fit_lines(x, per_sample, model == Growth::power_law, true, confidence);
  if (!line) return std::nullopt;
  return GrowthFit{model, *line};
}

std::optional<GrowthComparison> compare_growth(std::span<const double> x,
                                               const std::vector<std::vector<double>>& per_sample,
                                               double confidence) {
  if (distinct_count(x) < 3) return std::nullopt;
  std::vector<double> ratios;
  for (const auto& y : per_sample) {
    const SampleLine power = sample_line(x, y, true, true), exponential = sample_line(x, y, false, true);
    // A sample fitted exactly by one model (SSR 0) gives an infinite d: left out, as is one with too few
    // points.
    if (const double d = std::log(power.ssr / exponential.ssr); std::isfinite(d)) ratios.push_back(d);
  }
  if (ratios.size() < 2) return std::nullopt;
  GrowthComparison c{mean_ci(ratios, confidence), std::nullopt};
  if (c.log_ssr_ratio.low > 0) c.holds = Growth::exponential;
  if (c.log_ssr_ratio.high < 0) c.holds = Growth::power_law;
  return c;
}

}  // namespace normsim::stats
