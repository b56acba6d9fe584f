// Comparison with a mixed tolerance, |got - ref| <= tol + |ref| * eps (llm.c's dev/cuda harness), reporting
// the worst offender.
#pragma once
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <iomanip>
#include <limits>
#include <random>
#include <vector>

namespace normsim::test {

// Equal values (equal infinities included: inf - inf is NaN, not 0) and NaN against NaN agree; any other
// NaN or infinity is outside. The first entry outside by the most (a NaN excess counts as infinite) is
// reported.
template <class A, class B>
void require_close(const std::vector<A>& got, const std::vector<B>& ref, double tol, double eps) {
  REQUIRE(got.size() == ref.size());
  std::size_t bad = 0, worst = 0;
  double worst_excess = -std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double g = double(got[i]), r = double(ref[i]);
    if (g == r || (std::isnan(g) && std::isnan(r))) continue;
    double excess = std::abs(g - r) - (tol + std::abs(r) * eps);
    if (std::isnan(excess)) excess = std::numeric_limits<double>::infinity();
    if (excess > 0) ++bad;
    if (excess > worst_excess) {
      worst_excess = excess;
      worst = i;
    }
  }
  INFO("worst at " << worst << ": got " << std::setprecision(17) << double(got[worst]) << " ref "
                   << double(ref[worst]) << " (tol " << tol << ", eps " << eps << "); " << bad << " of "
                   << ref.size() << " outside");
  CHECK(bad == 0);
}

// n Gaussian entries of standard deviation `scale`, from mt19937(seed): the kernels' test inputs.
template <class R>
std::vector<R> random_vector(std::size_t n, unsigned seed, double scale = 1.0) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0.0, scale);
  std::vector<R> v(n);
  for (auto& x : v) x = R(dist(gen));
  return v;
}

}  // namespace normsim::test
