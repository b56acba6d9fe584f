// Growth against depth (or any x), fitted one way everywhere: a claim's slope or exponent (check/) and the
// exponent a depth-scaling figure prints (plots/) are the same function of the same samples.
//
// The samples are independent initializations, so the honest uncertainty is their spread: every sample's
// series is fitted on its own (least squares of t(y) on t(x), t = ln where asked) and the slopes are averaged
// with a Student-t interval (estimate.hpp's mean_ci). A sample's value at each x may come from a different
// configuration (a depth sweep): the samples are still independent, so the interval still holds.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "stats/estimate.hpp"

namespace normsim::stats {

struct LineFit {
  Estimate slope;        // mean over samples of each sample's slope, with its interval
  double intercept = 0;  // mean over the same samples of each sample's intercept (in t(y) units)
  double predict(double t_x) const { return intercept + slope.value * t_x; }  // in t(y) units
};

// per_sample[s][i]: sample s at x[i]. A point is used where t(x) and t(y) are finite (ln of a value <= 0 is
// not); a sample with fewer than two usable, distinct x is left out. Empty when no sample is left.
std::optional<LineFit> fit_lines(std::span<const double> x,
                                 const std::vector<std::vector<double>>& per_sample, bool log_x, bool log_y,
                                 double confidence = kConfidence);

// y = c x^b (a straight line on log-log axes) or y = c e^{b x} (straight on a log y axis).
enum class Growth { power_law, exponential };

struct GrowthFit {
  Growth model = Growth::power_law;
  LineFit line;                    // slope: b (the exponent of x, or the rate per unit of x); intercept: ln c
  double predict(double x) const;  // c x^b or c e^{b x}
};
std::optional<GrowthFit> fit_growth(std::span<const double> x,
                                    const std::vector<std::vector<double>>& per_sample, Growth model,
                                    double confidence = kConfidence);

// Which of the two describes the samples better. Both are two-parameter lines in ln y, so their residual
// sums of squares compare directly (equal parameter counts: the likelihood ratio and the AIC difference are
// both monotone in SSR_power / SSR_exponential). Each sample gives d = ln(SSR_power / SSR_exponential); the
// mean of d over samples with its Student-t interval decides: wholly above 0, the exponential holds; wholly
// below, the power law; straddling 0, the data cannot tell them apart over this range of x. Needs three
// distinct x (two points fit either exactly): empty otherwise.
struct GrowthComparison {
  Estimate log_ssr_ratio;
  std::optional<Growth> holds;
};
std::optional<GrowthComparison> compare_growth(std::span<const double> x,
                                               const std::vector<std::vector<double>>& per_sample,
                                               double confidence = kConfidence);

}  // namespace normsim::stats
