// From a claim's measurement to its statistic, interval, prediction and verdict. What each fit kind computes:
//   linear / powerlaw: per-sample least-squares slope of (log) y on (log) x; Student-t interval over samples.
//   ratio:       per-sample log(y / denominator) at the last point, Student-t interval, reported as a ratio.
//   bound:       the mean of y at every point against the band; the decisive point is reported.
//   profile:     y / meanfield - 1 (rel_tolerance) or y - meanfield (tolerance) at every point against the
//                band; the worst point is reported.
//   convergence: the exponent of |mean y - meanfield| against x (log-log least squares), bootstrapped over
//                samples within each point (a per-sample fit of a bias is not possible).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "check/claim.hpp"
#include "check/measure.hpp"
#include "check/verdict.hpp"

namespace normsim::check {

// One row of claims/<id>/data.csv: the mean over samples at x, its standard error, and the prediction there.
struct DataPoint {
  double x = 0, measured = 0, se = 0;
  std::optional<double> predicted;
};

struct ClaimResult {
  Estimate estimate;                // the statistic, in the units the claim states it in
  std::optional<double> predicted;  // the number compared with (the claim's, or the mean field's)
  std::optional<double> meanfield;  // the mean field's value of the same statistic, where it has one
  Band band{0, 0};                  // the agreement band, in the statistic's units
  Decision decision;
  std::optional<double> decided_at;  // bound/profile/ratio: the x of the reported point
  std::vector<DataPoint> data;
  std::string note;  // the claim's note plus what the evaluation had to say
};

ClaimResult evaluate(const ClaimSpec& claim, const Measurement& m);

}  // namespace normsim::check
