// Statistics (see estimate.hpp).
#include "stats/estimate.hpp"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <random>

namespace normsim::stats {

double t_quantile(int n, double confidence) {
  if (n < 2) return std::numeric_limits<double>::infinity();
  const boost::math::students_t dist(n - 1);
  return boost::math::quantile(dist, 0.5 + confidence / 2);
}

Estimate mean_ci(std::span<const double> values, double confidence) {
  Estimate e;
  e.n = static_cast<int>(values.size());
  if (e.n == 0) {
    e.value = e.low = e.high = std::numeric_limits<double>::quiet_NaN();
    return e;
  }
  double sum = 0;
  for (double v : values) sum += v;
  e.value = sum / e.n;
  double ss = 0;
  for (double v : values) ss += (v - e.value) * (v - e.value);
  e.se = e.n > 1 ? std::sqrt(ss / (e.n - 1) / e.n) : std::numeric_limits<double>::infinity();
  e.t = t_quantile(e.n, confidence);
  const double half = e.n > 1 ? e.t * e.se : std::numeric_limits<double>::infinity();
  e.low = e.value - half;
  e.high = e.value + half;
  return e;
}

double ols_slope(std::span<const double> x, std::span<const double> y) {
  const std::size_t n = std::min(x.size(), y.size());
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= n;
  my /= n;
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < n; ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  return sxx > 0 ? sxy / sxx : std::numeric_limits<double>::quiet_NaN();
}

Estimate bootstrap(const std::vector<std::vector<double>>& groups,
                   const std::function<double(const std::vector<std::vector<double>>&)>& statistic,
                   int replicates, std::uint64_t seed, double confidence) {
  Estimate e;
  e.value = statistic(groups);
  e.n = groups.empty() ? 0 : static_cast<int>(groups.front().size());
  std::mt19937_64 rng(seed);
  std::vector<double> reps;
  reps.reserve(replicates);
  std::vector<std::vector<double>> resampled(groups.size());
  for (int r = 0; r < replicates; ++r) {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto& src = groups[g];
      resampled[g].resize(src.size());
      std::uniform_int_distribution<std::size_t> pick(0, src.empty() ? 0 : src.size() - 1);
      for (auto& v : resampled[g]) v = src[pick(rng)];
    }
    if (const double s = statistic(resampled); std::isfinite(s)) reps.push_back(s);
  }
  if (reps.size() < 2) {
    e.se = std::numeric_limits<double>::infinity();
    e.low = -e.se;
    e.high = e.se;
    return e;
  }
  std::sort(reps.begin(), reps.end());
  double mean = 0;
  for (double v : reps) mean += v;
  mean /= reps.size();
  double ss = 0;
  for (double v : reps) ss += (v - mean) * (v - mean);
  e.se = std::sqrt(ss / (reps.size() - 1));
  const auto at = [&](double p) {
    return reps[std::min(reps.size() - 1, static_cast<std::size_t>(p * reps.size()))];
  };
  e.low = at((1 - confidence) / 2);
  e.high = at((1 + confidence) / 2);
  // The normal multiplier: what turns a standard error into this interval's half-width.
  e.t = 1.959963984540054;
  return e;
}

}  // namespace normsim::stats
