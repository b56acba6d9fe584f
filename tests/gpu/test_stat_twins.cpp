// The statistics ops' references (gpu/stat_ops.hpp) against the CPU backend's metrics
// (sim/stream_metrics.cpp, the specification), on host memory: the references are what the kernels are
// tested on (tests/gpu/test_gpu_ops.cpp), so this closes the chain kernel = reference = sim. Both sum the
// stream fields with sim/stream_sums.hpp's row sums in the same order, so they agree bit for bit.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gpu/ops.hpp"
#include "gpu/stat_ops.hpp"
#include "sim/stream_metrics.hpp"
#include "tests/sim/test_util.hpp"

namespace gpu = normsim::gpu;
namespace sim = normsim::sim;

namespace {

constexpr int kStatSamples = 3, kStatTokens = 9, kStatWidth = 23;

std::vector<float> random_stream(unsigned seed, double corr) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<float> x(std::size_t(kStatSamples) * kStatTokens * kStatWidth);
  std::vector<double> shared(kStatWidth);
  for (int s = 0; s < kStatSamples; ++s) {
    for (double& v : shared) v = z(gen);
    for (int t = 0; t < kStatTokens; ++t)
      for (int c = 0; c < kStatWidth; ++c)
        x[(std::size_t(s) * kStatTokens + t) * kStatWidth + c] =
            float(std::sqrt(corr) * shared[c] + std::sqrt(1 - corr) * z(gen));
  }
  return x;
}

sim::MatD sample_matrix(const std::vector<float>& x, int s) {
  sim::MatD m(kStatTokens, kStatWidth);
  for (int t = 0; t < kStatTokens; ++t)
    for (int c = 0; c < kStatWidth; ++c)
      m(t, c) = double(x[(std::size_t(s) * kStatTokens + t) * kStatWidth + c]);
  return m;
}

}  // namespace

TEST_CASE("the statistics references compute sim's stream metrics, bit for bit", "[stats]") {
  const std::vector<float> x = random_stream(1, 0.3), next = random_stream(2, 0.5);
  std::vector<double> rows(std::size_t(kStatSamples) * kStatTokens * gpu::kRowStats),
      colsq(std::size_t(kStatSamples) * kStatWidth), out(gpu::kStreamFields * kStatSamples);
  gpu::cpu::row_stats(x.data(), next.data(), kStatSamples * kStatTokens, kStatWidth, rows.data());
  gpu::cpu::unit_column_square(x.data(), rows.data(), kStatSamples, kStatTokens, kStatWidth, colsq.data());
  gpu::cpu::stream_stats_finish(rows.data(), colsq.data(), kStatSamples, kStatTokens, kStatWidth, out.data());
  for (int s = 0; s < kStatSamples; ++s) {
    const sim::MatD a = sample_matrix(x, s), b = sample_matrix(next, s);
    const auto field = [&](int f) { return out[std::size_t(f) * kStatSamples + s]; };
    CHECK(field(gpu::f_act_sq) == sim::mean_square(a));
    CHECK(field(gpu::f_mean_abs) == sim::mean_abs(a));
    CHECK(field(gpu::f_max_abs) == sim::max_abs(a));
    CHECK(field(gpu::f_token_cos) == sim::token_cosine(a));
    CHECK(field(gpu::f_cos_next) == sim::mean_token_cosine(a, b));
    CHECK(field(gpu::f_rel_update) == sim::mean_relative_update(a, b));
    CHECK(field(gpu::f_nonfinite) == 0);
  }
}

// Bit for bit: the reference and the CPU backend finish the same eigenvalues (sim::gram_spectrum's) with the
// same function (sim/statistic_finish.hpp).
TEST_CASE("the effective-rank twin is sim's effective_rank given the Gram eigenvalues", "[stats]") {
  const std::vector<float> x = random_stream(3, 0.6);
  for (int s = 0; s < kStatSamples; ++s) {
    const sim::MatD a = sample_matrix(x, s);
    const sim::GramSpectrum g = sim::gram_spectrum(a);
    REQUIRE(g.solved);
    REQUIRE(g.eigenvalues.size() == kStatTokens);  // T <= d: x x^T
    const int ok = 0;
    double got = 0;
    gpu::cpu::spectral_effective_rank(g.eigenvalues.data(), &ok, kStatTokens, 1, &got);
    CHECK(normsim::test::same_bits(got, sim::effective_rank(a)));
    const int failed = 1;
    gpu::cpu::spectral_effective_rank(g.eigenvalues.data(), &failed, kStatTokens, 1, &got);
    CHECK(std::isnan(got));  // a solver that did not converge gives NaN, never a number
  }
}

TEST_CASE("statistics twins: a zero token makes token_cos NaN, a NaN entry is counted", "[stats]") {
  std::vector<float> x = random_stream(4, 0.0);
  for (int c = 0; c < kStatWidth; ++c)
    x[std::size_t(kStatTokens + 2) * kStatWidth + c] = 0;  // sample 1, token 2
  x[std::size_t(2 * kStatTokens) * kStatWidth + 5] = std::numeric_limits<float>::infinity();  // sample 2
  std::vector<double> rows(std::size_t(kStatSamples) * kStatTokens * gpu::kRowStats),
      colsq(std::size_t(kStatSamples) * kStatWidth), out(gpu::kStreamFields * kStatSamples);
  gpu::cpu::row_stats(x.data(), static_cast<const float*>(nullptr), kStatSamples * kStatTokens, kStatWidth,
                      rows.data());
  gpu::cpu::unit_column_square(x.data(), rows.data(), kStatSamples, kStatTokens, kStatWidth, colsq.data());
  gpu::cpu::stream_stats_finish(rows.data(), colsq.data(), kStatSamples, kStatTokens, kStatWidth, out.data());
  CHECK(std::isfinite(out[gpu::f_token_cos * kStatSamples + 0]));
  CHECK(std::isnan(out[gpu::f_token_cos * kStatSamples + 1]));
  CHECK(std::isnan(sim::token_cosine(sample_matrix(x, 1))));
  CHECK(out[gpu::f_nonfinite * kStatSamples + 0] == 0);
  CHECK(out[gpu::f_nonfinite * kStatSamples + 2] == 1);
  CHECK(std::isnan(out[gpu::f_max_abs * kStatSamples + 2]));
  CHECK(std::isnan(out[gpu::f_cos_next * kStatSamples + 0]));  // no next stream given
}

// scaled_widen is scaled_sum's per-sample scaling (gpu/ops.hpp) followed by widen, bit for bit: the
// weight-gradient norms' operands went through those two passes before.
TEST_CASE("scaled_widen is scaled_sum then widen", "[stats]") {
  const std::vector<float> x = random_stream(5, 0.2);
  const std::vector<double> factor = {0x1p-130, 3.0, 0x1p+20};  // subnormal products; rounded ones
  const std::size_t n = x.size() / kStatSamples;
  std::vector<float> scaled(x.size());
  std::vector<double> two_passes(x.size()), one_pass(x.size());
  gpu::cpu::scaled_sum(scaled.data(), x.data(), factor.data(), static_cast<const float*>(nullptr), n,
                       kStatSamples, false);
  gpu::cpu::widen(scaled.data(), scaled.size(), two_passes.data());
  gpu::cpu::scaled_widen(x.data(), factor.data(), n, kStatSamples, one_pass.data());
  CHECK(one_pass == two_passes);
}

TEST_CASE("frobenius_finish scales back by the powers of two and keeps NaN", "[stats]") {
  const double max_a[] = {0.75 * 1024, 0.0, NAN, 3.0}, max_b[] = {0.5 * 8, 2.0, 1.0, 5.0};
  const double sum[] = {9.0, 4.0, 1.0, -1e-30};
  double out[4];
  gpu::cpu::frobenius_finish(max_a, max_b, sum, 4, out);
  CHECK(out[0] == std::ldexp(3.0, 10 + 3));  // frexp(768) = 0.75 * 2^10, frexp(4) = 0.5 * 2^3
  CHECK(out[1] == 0.0);
  CHECK(std::isnan(out[2]));
  CHECK(out[3] == 0.0);  // a rounding-negative sum is 0, not NaN
}
