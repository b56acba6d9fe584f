// Issue 16: no statistic is ever reported as a wrong finite number. Reductions of float32 tensors do not
// overflow where the result fits; a statistic that is NaN or Inf from a finite stream is flagged with its
// metric and layer, never silently dropped or clamped to 0.
#include <catch2/catch.hpp>
#include <cmath>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/cpu/frobenius.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/metrics.hpp"
#include "sim/stream_metrics.hpp"

using namespace normsim::sim;

TEST_CASE("||A^T B||_F of float32 entries near 1e19 matches the float64 value") {
  // A A^T has entries near n * 1e38, past float32's 3.4e38: the old code returned 0 here.
  Mat<float> a(4, 64), b(4, 32);
  for (int i = 0; i < a.size(); ++i) a.data()[i] = 1e19f * float(std::sin(0.7 * i + 0.1));
  for (int i = 0; i < b.size(); ++i) b.data()[i] = 3e18f * float(std::cos(1.3 * i));
  const double want = frobenius_of_AtB<double>(a.cast<double>(), b.cast<double>());
  REQUIRE(std::isfinite(want));
  // float32 products of 4 terms: relative error a few ulp of float (1.2e-7 each).
  CHECK(frobenius_of_AtB<float>(a, b) == Approx(want).epsilon(1e-5));
  Mat<float> b_inf = b;
  b_inf(3, 31) = -INFINITY;  // the last entry: the one-pass max must still see it
  CHECK(std::isnan(frobenius_of_AtB<float>(a, b_inf)));
  a(1, 1) = NAN;
  CHECK(std::isnan(frobenius_of_AtB<float>(a, b)));
  CHECK(std::isnan(frobenius_of_AtB<float>(b, a)));
  CHECK(frobenius_of_AtB<float>(Mat<float>::Zero(4, 64), b) == 0.0);
}

TEST_CASE("in range, the scaled reduction is bit for bit the unscaled one") {
  Mat<double> a(3, 40), b(3, 50);
  for (int i = 0; i < a.size(); ++i) a.data()[i] = std::sin(0.37 * i);
  for (int i = 0; i < b.size(); ++i) b.data()[i] = std::cos(0.11 * i) * 5;
  const double gram = std::sqrt((a * a.transpose()).cwiseProduct(b * b.transpose()).sum());
  CHECK(frobenius_of_AtB<double>(a, b) == gram);
}

TEST_CASE("Post-LN at input_std 1e19: float32 weight gradients equal float64's, nothing dropped") {
  Config c;
  c.placement = normsim::vocab::Placement::post;
  c.depth = 4;
  c.width = 64;
  c.tokens = 8;
  c.input_std = 1e19;
  const std::vector<int> samples{0, 1};
  c.precision = normsim::vocab::Precision::float32;
  const auto f32 = CpuBackend(1).run(c, samples);
  c.precision = normsim::vocab::Precision::float64;
  const auto f64 = CpuBackend(1).run(c, samples);
  for (std::size_t s = 0; s < samples.size(); ++s) {
    CHECK(f32[s].nonfinite_statistics.empty());
    CHECK_FALSE(f32[s].nonfinite);
    for (int m : {int(metric::gradw_w1), int(metric::gradw_w2)})
      for (int k = 0; k < c.depth; ++k) {
        INFO("metric " << metric_table()[m].name << " sublayer " << k);
        // Same weights and inputs; float32 rounding through 4 normalized sublayers stays near 1e-6.
        CHECK(f32[s].values[m][k] == Approx(f64[s].values[m][k]).epsilon(1e-4));
      }
  }
}

TEST_CASE("a zero input: undefined statistics are flagged with metric and layer, not dropped") {
  Config c;
  c.placement = normsim::vocab::Placement::pre;
  c.depth = 2;
  c.width = 16;
  c.tokens = 4;
  c.input_std = 0.0;
  const auto r = CpuBackend(1).run(c, std::vector<int>{0})[0];
  CHECK_FALSE(r.nonfinite);  // every stream is finite (all zero at x_0)
  const auto flagged = [&](int m, int layer) {
    for (const auto& f : r.nonfinite_statistics)
      if (f.metric == m && f.layer == layer) return true;
    return false;
  };
  // x_0 = 0: its cosines and effective rank are 0/0.
  CHECK(flagged(metric::eff_rank, 0));
  CHECK(flagged(metric::token_cos, 0));
  CHECK(flagged(metric::cos_next, 0));
  CHECK(flagged(metric::rel_update, 0));
  for (const auto& f : r.nonfinite_statistics) CHECK_FALSE(std::isfinite(r.values[f.metric][f.layer]));
  // Every NaN among the values is either flagged, a matrix the MLP does not have (wgate, wq, wk, wv,
  // wo, the cross-attention's cq, ck, cv, co, the attention gate's wga and a routed MLP's router: 11 per
  // sublayer), output_change,
  // which update = "none" does not measure (K + 1 layers), lane_cos, which one stream does not have (K + 1),
  // or a metric not asked for (costly: not in the default `metrics`; a Jacobian's, a training loop's).
  std::size_t nonfinite = 0;
  for (int m = 0; m < metric::count; ++m)
    if (!normsim::vocab::metric_table()[std::size_t(m)].costly)
      for (double v : r.values[m]) nonfinite += !std::isfinite(v);
  CHECK(r.nonfinite_statistics.size() + 11 * std::size_t(c.depth) + 2 * std::size_t(c.depth + 1) ==
        nonfinite);
}

TEST_CASE("all_finite is false exactly where an entry is infinite or NaN, whatever its place",
          "[nonfinite]") {
  MatD x = MatD::Constant(7, 13, 1e308);  // finite entries whose sum would overflow
  x(0, 0) = -1e308, x(6, 12) = 4.9e-324;
  REQUIRE(all_finite(x));
  REQUIRE(all_finite(MatD(0, 5)));
  for (const double bad : {double(INFINITY), -double(INFINITY), double(NAN)})
    for (const auto& [i, j] : {std::pair{0, 0}, std::pair{3, 8}, std::pair{6, 12}}) {
      MatD y = x;
      y(i, j) = bad;
      INFO("entry " << i << ", " << j << " = " << bad);
      REQUIRE_FALSE(all_finite(y));
    }
}
