// The one fit of claims and figures (stats/growth.hpp): per-sample lines averaged with a Student-t interval,
// and the power-law / exponential comparison, on data whose answer is known.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "stats/growth.hpp"

using namespace normsim::stats;

namespace {

const std::vector<double> kDepths = {4, 8, 16, 32, 64, 128};

// `samples` series of f(K) times log-normal noise of relative size `noise` (seeded: the same data every run).
std::vector<std::vector<double>> noisy(double (*f)(double), int samples, double noise, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0, noise);
  std::vector<std::vector<double>> rows(samples);
  for (auto& row : rows)
    for (double K : kDepths) row.push_back(f(K) * std::exp(z(rng)));
  return rows;
}

double power(double K) {
  return 3 * std::pow(K, 0.5);
}
double exponential(double K) {
  return 0.5 * std::exp(0.05 * K);
}

}  // namespace

TEST_CASE("exact data: the exponent and prefactor are recovered, with a zero-width interval", "[stats]") {
  const std::vector<std::vector<double>> rows(4, [] {
    std::vector<double> r;
    for (double K : kDepths) r.push_back(power(K));
    return r;
  }());
  const auto fit = fit_growth(kDepths, rows, Growth::power_law);
  REQUIRE(fit);
  CHECK(fit->line.slope.value == Approx(0.5).margin(1e-12));
  CHECK(fit->line.slope.high - fit->line.slope.low == Approx(0).margin(1e-12));
  CHECK(fit->predict(10) == Approx(power(10)).epsilon(1e-12));
  CHECK(fit->line.slope.n == 4);
}

TEST_CASE("the interval is the samples' Student-t interval of their slopes, checked by hand", "[stats]") {
  // Two samples on x = (1, e, e^2) in log-log: slopes 0.9 and 1.1 exactly (lines), mean 1.0, sd 0.1414,
  // se 0.1, t_{0.975,1} = 12.7062047.
  const std::vector<double> x = {1, std::exp(1.0), std::exp(2.0)};
  const std::vector<std::vector<double>> rows = {{1, std::exp(0.9), std::exp(1.8)},
                                                 {1, std::exp(1.1), std::exp(2.2)}};
  const auto fit = fit_lines(x, rows, true, true);
  REQUIRE(fit);
  CHECK(fit->slope.value == Approx(1.0));
  CHECK(fit->slope.se == Approx(0.1));
  CHECK(fit->slope.high - fit->slope.value == Approx(12.7062047 * 0.1).epsilon(1e-6));
}

TEST_CASE("unusable points and samples are left out; nothing usable gives no fit", "[stats]") {
  CHECK_FALSE(fit_lines(std::vector<double>{2}, {{1.0}}, true, true));
  CHECK_FALSE(fit_lines(std::vector<double>{4, 4}, {{1.0, 2.0}}, true, true));
  const auto fit = fit_lines(std::vector<double>{2, 4, 8}, {{1, 0, 4}, {1, std::nan(""), 4}}, true, true);
  REQUIRE(fit);  // ln 0 and NaN dropped: both samples fit (2, 1) and (8, 4), slope 1/2 in log-log
  CHECK(fit->slope.value == Approx(0.5));
  CHECK(fit->slope.n == 2);
}

TEST_CASE("a power law and an exponential are told apart, and too few depths are not judged", "[stats]") {
  // 16 samples with 5 % log-normal noise: over K = 4..128 the curvature each model misses is far above the
  // noise (ln y of the exponential rises by 6.2 against 0.05 of noise per point), so the mean log SSR ratio's
  // 95 % interval lies well clear of 0 for both; the seeds are fixed so the data do not change.
  const auto p = compare_growth(kDepths, noisy(power, 16, 0.05, 1));
  REQUIRE(p);
  REQUIRE(p->holds);
  CHECK(*p->holds == Growth::power_law);
  const auto e = compare_growth(kDepths, noisy(exponential, 16, 0.05, 2));
  REQUIRE(e);
  REQUIRE(e->holds);
  CHECK(*e->holds == Growth::exponential);
  CHECK_FALSE(compare_growth(std::vector<double>{4, 8}, noisy(power, 16, 0.05, 3)));
}

TEST_CASE("noise far above the curvature leaves the comparison undecided", "[stats]") {
  // 3 depths a factor 1.1 apart: ln K and K are nearly collinear (the models differ by < 1e-3 in ln y),
  // against noise 0.5: the per-sample ratios are then symmetric about 0 and the interval straddles it.
  const std::vector<double> x = {10, 11, 12.1};
  std::mt19937_64 rng(7);
  std::normal_distribution<double> z(0, 0.5);
  std::vector<std::vector<double>> rows(32);
  for (auto& row : rows)
    for (double K : x) row.push_back(std::pow(K, 0.5) * std::exp(z(rng)));
  const auto c = compare_growth(x, rows);
  REQUIRE(c);
  CHECK_FALSE(c->holds);
}
