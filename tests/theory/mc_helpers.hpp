// Fixed-seed Monte Carlo estimates with their standard error, for checking Gaussian expectations.
// Tolerance policy: |exact - mean| <= k * se with se = sample sd / sqrt(n) estimated from the same samples.
// With k = 5 a correct formula fails with probability ~6e-7 per check (CLT; n >= 1e5 makes the normal
// approximation good even for the heavy-ish tails of phi^2), and the seed is fixed, so a failure means
// a formula is wrong (or off by more than ~5 se, about 1e-3 relative here).
#pragma once
#include <cmath>
#include <cstdint>
#include <random>

namespace normsim::theory::test {

struct Estimate {
  double mean = 0.0, se = 0.0;
};

template <class F>
Estimate monte_carlo(F sample, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  double sum = 0.0, sum_sq = 0.0;
  for (int i = 0; i < n; ++i) {
    const double x = normal(rng), y = normal(rng);
    const double v = sample(x, y);
    sum += v, sum_sq += v * v;
  }
  const double mean = sum / n;
  const double var = (sum_sq - n * mean * mean) / (n - 1);
  return {mean, std::sqrt(std::max(var, 0.0) / n)};
}

constexpr double kSigmas = 5.0;

}  // namespace normsim::theory::test
