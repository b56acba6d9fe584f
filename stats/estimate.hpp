// The statistics behind every verdict and every fitted figure (check/ and plots/ read them; one definition):
// means with Student-t intervals over independent samples, least-squares slopes, and a percentile bootstrap
// where a statistic cannot be computed per sample.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace normsim::stats {

// An estimate with its standard error and the interval it implies.
struct Estimate {
  double value = 0;
  double se = 0;
  int n = 0;     // independent samples behind it
  double t = 0;  // the multiplier of se that gives the interval's half-width
  double low = 0, high = 0;
};

inline constexpr double kConfidence = 0.95;

// Two-sided Student-t quantile for `confidence` with n - 1 degrees of freedom (boost::math::students_t).
double t_quantile(int n, double confidence = kConfidence);

// Mean of independent per-sample values with the Student-t interval: the samples are independent
// initializations, so their spread is the honest measure of uncertainty. n = 1 gives an infinite interval.
Estimate mean_ci(std::span<const double> values, double confidence = kConfidence);

// Least-squares slope of y on x (no weights).
double ols_slope(std::span<const double> x, std::span<const double> y);

// Percentile bootstrap of `statistic` over `groups` independent sets of samples, each resampled with
// replacement within itself (fixed seed: the same data give the same interval). value = statistic of the
// data; se = the replicates' standard deviation; low/high the percentile interval.
Estimate bootstrap(const std::vector<std::vector<double>>& groups,
                   const std::function<double(const std::vector<std::vector<double>>&)>& statistic,
                   int replicates = 2000, std::uint64_t seed = 12345, double confidence = kConfidence);

}  // namespace normsim::stats
