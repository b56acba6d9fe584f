// Statistical checks of the simulator against theory.md's closed forms (fixed seeds). Each test fits a
// per-sample quantity, averages over samples, and allows 4 standard errors of that average, measured
// from the samples themselves; it also requires the standard error to be small enough that the test
// could fail (a test that cannot fail asserts nothing).
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <vector>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/metrics.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;

namespace {

double ols_slope(const std::vector<double>& y) {
  const double n = double(y.size()), xm = (n - 1) / 2;
  double ym = std::accumulate(y.begin(), y.end(), 0.0) / n, sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    sxy += (double(i) - xm) * (y[i] - ym);
    sxx += (double(i) - xm) * (double(i) - xm);
  }
  return sxy / sxx;
}

struct MeanSe {
  double mean, se;
};
MeanSe mean_se(const std::vector<double>& v) {
  const double n = double(v.size());
  const double m = std::accumulate(v.begin(), v.end(), 0.0) / n;
  double ss = 0;
  for (double x : v) ss += (x - m) * (x - m);
  return {m, std::sqrt(ss / (n - 1) / n)};
}

std::vector<SampleRecord> run(const Config& c) {
  std::vector<int> samples(c.samples);
  std::iota(samples.begin(), samples.end(), 0);
  return CpuBackend(0).run(c, samples);
}

}  // namespace

// theory.md §3(a) Proposition A: v_k = v_0 + k q with q = sigma2^2 M2(sigma1^2). Fan-in gain 1 on both
// matrices (sigma1^2 = sigma2^2 = 1): ReLU q = 1/2; GELU q = M2_GELU(1) = 1/3 + sqrt(3)/(6 pi) = 0.425221.
// Given the normalized input, q is exact at any width (the pre-activations are exactly Gaussian), so the
// only tolerance is sampling noise.
TEST_CASE("Pre-LN act_sq grows linearly with the predicted slope", "[statistics]") {
  for (const auto& [act, q] :
       {std::pair{normsim::vocab::Activation::relu, 0.5},
        std::pair{normsim::vocab::Activation::gelu, 1.0 / 3 + std::sqrt(3.0) / (6 * M_PI)}}) {
    Config c;
    c.placement = normsim::vocab::Placement::pre;
    c.activation = act;
    c.width = 128;
    c.tokens = 16;
    c.depth = 16;
    c.samples = 24;
    c.seed = 2024;
    std::vector<double> slopes;
    for (const SampleRecord& r : run(c)) slopes.push_back(ols_slope(r.values[metric::act_sq]));
    const MeanSe s = mean_se(slopes);
    INFO(act << ": slope " << s.mean << " +- " << s.se << ", predicted " << q);
    REQUIRE(s.se < 0.02 * q);  // decisive: 4 SE is below 8% of the slope
    CHECK(std::abs(s.mean - q) < 4 * s.se);
  }
}

// theory.md §3(c): in Post-LN, E||g_k||^2 = E||g_{k+1}||^2 (1 + chi)/(1 + q) + O(1/d); ReLU has chi = q,
// so the profile is flat up to O(1/d) per sublayer. The O(1/d) terms (LayerNorm's projections, finite-width
// fluctuations of x + F) are not predicted in closed form, so they get an explicit allowance of 2/d per
// sublayer on top of 4 standard errors. The test still decides: GELU's predicted 0.0213 per sublayer
// (theory.md §3(c)) lies outside 4 SE + 2/d at d = 256.
TEST_CASE("Post-LN grad_sq is flat for ReLU", "[statistics]") {
  Config c;
  c.placement = normsim::vocab::Placement::post;
  c.activation = normsim::vocab::Activation::relu;
  c.width = 256;
  c.tokens = 8;
  c.depth = 16;
  c.seed = 7;
  c.samples = 32;
  std::vector<double> slopes;
  for (const SampleRecord& r : run(c)) {
    std::vector<double> lg;
    for (double g : r.values[metric::grad_sq]) lg.push_back(std::log(g));
    slopes.push_back(ols_slope(lg));
  }
  const MeanSe s = mean_se(slopes);
  const double allowance = 2.0 / c.width;
  INFO("slope of ln grad_sq per sublayer " << s.mean << " +- " << s.se << ", predicted 0 +- O(1/d)");
  REQUIRE(4 * s.se + allowance < 0.0213);  // decisive against GELU's per-sublayer growth
  CHECK(std::abs(s.mean) < 4 * s.se + allowance);
}
