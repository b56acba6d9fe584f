#include "sim/jacobian_probes.hpp"

#include <cmath>
#include <limits>

namespace normsim::sim {

double relative_spectral_variance(std::span<const double> q, double n) {
  const double P = double(q.size());
  if (q.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  double mean = 0;
  for (double v : q) mean += v / P;
  double ss = 0;
  for (double v : q) ss += (v - mean) * (v - mean);
  return (n + 2.0) / 2.0 * (ss / (P - 1.0)) / (mean * mean);
}

JacobianEstimates JacobianSums::of_sample(int s) const {
  JacobianEstimates out;
  const auto at = [&](const std::vector<double>& sums, int i, int p) {
    return sums[(std::size_t(i) * probes + p) * samples + s];
  };
  std::vector<double> q(probes);
  for (int l = 0; l <= depth && !stack.empty(); ++l) {
    for (int p = 0; p < probes; ++p) q[p] = at(stack, l, p);
    double mean = 0;
    for (const double v : q) mean += v / probes;
    out.jac_sq.push_back(mean);
    // Undefined with one probe: left out rather than recorded as a non-finite statistic.
    if (probes >= 2) out.jac_spread.push_back(relative_spectral_variance(q, entries));
  }
  for (int k = 0; k < depth && !blocks.empty(); ++k) {
    double sum = 0;
    for (int p = 0; p < probes; ++p) sum += at(blocks, k, p);
    out.block_identity_dev.push_back(std::sqrt(sum / probes));
  }
  return out;
}

}  // namespace normsim::sim
