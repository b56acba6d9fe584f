// Least-squares power-law fits y = c x^b, fitted as a line in (log x, log y), with a 95% confidence interval
// on the exponent from the Student-t quantile. Used for depth scaling (e.g. Xiong et al. 2020: the last
// layer's weight gradient of Pre-LN shrinks like K^(-1/2), Post-LN's does not).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace normsim::plots {

struct PowerLawFit {
  double exponent = 0;       // b
  double exponent_ci95 = 0;  // half-width of the 95% CI on b; NaN with two points (no residual dof)
  double log_prefactor = 0;  // ln c
  std::size_t n = 0;         // points fitted

  double predict(double x) const;
};

// Fits every point; empty when fewer than two points, a non-positive x or y, or all x equal.
std::optional<PowerLawFit> fit_power_law(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace normsim::plots
