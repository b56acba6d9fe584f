// The verdict machinery on synthetic data: claims that must come out supported, refuted and inconclusive, the
// samples-needed estimate, and the fits behind them.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "check/evaluate.hpp"
#include "check/measure.hpp"
#include "check/verdict.hpp"
#include "sim/metrics.hpp"
#include "stats/estimate.hpp"

using namespace normsim::check;

namespace {

// y[s][i] = slope * x_i + noise (fixed seed), as a per-layer linear claim would see it.
Measurement linear_data(double slope, double noise, int samples, int points = 16) {
  Measurement m;
  std::mt19937_64 rng(42);
  std::normal_distribution<double> n(0, noise);
  for (int i = 0; i < points; ++i) m.x.push_back(i), m.meanfield.push_back(1 + slope * i);
  m.y.resize(samples);
  for (auto& row : m.y)
    for (double x : m.x) row.push_back(1 + slope * x + n(rng));
  return m;
}

ClaimSpec linear_claim(double predicted, double tolerance) {
  ClaimSpec c;
  c.id = "synthetic";
  c.fit = FitKind::linear;
  c.predicted = predicted;
  c.tolerance = tolerance;
  return c;
}

}  // namespace

TEST_CASE("a synthetic claim comes out supported, refuted or inconclusive", "[check][verdict]") {
  SECTION("supported: the interval lies inside the band") {
    const auto r = evaluate(linear_claim(0.5, 0.05), linear_data(0.5, 0.05, 16));
    CHECK(r.decision.verdict == Verdict::supported);
    CHECK(r.estimate.value == Approx(0.5).margin(0.01));
  }
  SECTION("refuted: the interval lies outside the band") {
    const auto r = evaluate(linear_claim(1.0, 0.05), linear_data(0.5, 0.05, 16));
    CHECK(r.decision.verdict == Verdict::refuted);
  }
  SECTION("inconclusive: noisy data straddle the band, and more samples are asked for") {
    const auto r = evaluate(linear_claim(0.5, 0.05), linear_data(0.5, 3.0, 4));
    CHECK(r.decision.verdict == Verdict::inconclusive);
    REQUIRE(r.decision.samples_needed);
    CHECK(*r.decision.samples_needed > 4);
  }
  SECTION("mean field as the prediction") {
    ClaimSpec c = linear_claim(0, 0.05);
    c.predicted.reset();
    c.meanfield = true;
    const auto r = evaluate(c, linear_data(0.3, 0.05, 16));
    REQUIRE(r.predicted);
    CHECK(*r.predicted == Approx(0.3));
    CHECK(r.decision.verdict == Verdict::supported);
  }
}

// The figure's dashed curve is what its legend names: a claim's own slope, drawn through the first measured
// point even where a mean field exists (its slope is reported as r.meanfield, beside the prediction).
TEST_CASE("a slope claim draws its own slope, not the mean field's", "[check][verdict]") {
  const Measurement m = linear_data(0.5, 0.05, 16);  // mean field slope 0.5
  const auto r = evaluate(linear_claim(1.0, 0.05), m);
  REQUIRE(r.meanfield);
  CHECK(*r.meanfield == Approx(0.5));
  REQUIRE(r.data.size() == m.x.size());
  for (const auto& d : r.data) {
    REQUIRE(d.predicted);
    CHECK(*d.predicted == Approx(r.data.front().measured + 1.0 * (d.x - r.data.front().x)));
  }
}

TEST_CASE("samples needed follow n (se / needed_se)^2", "[check][verdict]") {
  Estimate e;
  e.value = 0.0;
  e.se = 0.1;
  e.n = 10;
  e.t = 2.0;
  e.low = -0.2;
  e.high = 0.2;
  // Inside a band of half-width 0.1: the half-width must fall to 0.1, i.e. se to 0.05 -> 4x the samples.
  const Decision d = decide(e, Band{-0.1, 0.1});
  CHECK(d.verdict == Verdict::inconclusive);
  REQUIRE(d.samples_needed);
  CHECK(*d.samples_needed == 40);
  CHECK(decide(e, Band{-1, 1}).verdict == Verdict::supported);
  CHECK(decide(e, Band{0.5, 1}).verdict == Verdict::refuted);
  CHECK(decide(e, Band{-INFINITY, -0.3}).verdict == Verdict::refuted);
}

TEST_CASE("statistics: Student-t interval, least squares, bootstrap", "[check][stats]") {
  CHECK(t_quantile(2) == Approx(12.706).epsilon(1e-3));
  CHECK(t_quantile(31) == Approx(2.042).epsilon(1e-3));
  const std::vector<double> v = {1, 2, 3, 4};
  const Estimate e = mean_ci(v);
  CHECK(e.value == Approx(2.5));
  CHECK(e.se == Approx(std::sqrt(5.0 / 3 / 4)));
  const std::vector<double> x = {0, 1, 2, 3}, y = {1, 3, 5, 7};
  CHECK(ols_slope(x, y) == Approx(2));
  const std::vector<std::vector<double>> groups = {{1, 1.1, 0.9, 1.0}, {2, 2.1, 1.9, 2.0}};
  const Estimate b = bootstrap(groups, [](const auto& g) {
    double a = 0, c = 0;
    for (double v : g[0]) a += v;
    for (double v : g[1]) c += v;
    return c / a;
  });
  CHECK(b.value == Approx(2.0));
  CHECK(b.low < 2.0);
  CHECK(b.high > 2.0);
}

TEST_CASE("ratio and profile claims", "[check][verdict]") {
  Measurement m;
  m.x = {50};
  m.meanfield = {1.0};
  m.meanfield_den = {1.0};
  std::mt19937_64 rng(3);
  std::normal_distribution<double> n(0, 0.05);
  for (int s = 0; s < 16; ++s) m.y.push_back({std::exp(n(rng))}), m.den.push_back({1.0});
  ClaimSpec c;
  c.fit = FitKind::ratio;
  c.predicted = 7;
  c.rel_tolerance = 0.3;
  c.denominator = "first";
  CHECK(evaluate(c, m).decision.verdict == Verdict::refuted);
  c.predicted = 1;
  CHECK(evaluate(c, m).decision.verdict == Verdict::supported);

  Measurement p = linear_data(0.5, 0.01, 8);
  ClaimSpec prof;
  prof.fit = FitKind::profile;
  prof.meanfield = true;
  prof.rel_tolerance = 0.05;
  CHECK(evaluate(prof, p).decision.verdict == Verdict::supported);
  for (auto& v : p.meanfield) *v *= 1.5;
  CHECK(evaluate(prof, p).decision.verdict == Verdict::refuted);
}

TEST_CASE("a claim about trained models is not testable at init, whatever init gives", "[check][verdict]") {
  ClaimSpec c = linear_claim(0.5, 0.05);
  const Measurement m = linear_data(0.5, 0.01, 8);
  REQUIRE(evaluate(c, m).decision.verdict == Verdict::supported);
  c.testable_at_init = false;
  const ClaimResult r = evaluate(c, m);
  CHECK(r.decision.verdict == Verdict::not_testable);
  CHECK(!r.decision.samples_needed);
  CHECK(std::abs(r.estimate.value - 0.5) < 0.01);  // what init gives is still measured and reported
  CHECK(to_string(r.decision.verdict) == "not testable at init");
}

// Issue 24 5(a): a ratio claim over a swept key judges every point it covers, not only the last one; or the
// one x the source names (decide_at).
TEST_CASE("a ratio claim judges every swept point, or the one the source names", "[check][verdict]") {
  Measurement m;
  m.x = {0.0, 0.5, 1.0};
  std::mt19937_64 rng(5);
  std::normal_distribution<double> n(0, 0.02);
  // True ratios 0.97, 0.8, 0.67: "below 0.9" holds at x = 0.5 and 1 but not at x = 0.
  const double truth[] = {0.97, 0.8, 0.67};
  m.meanfield = {1.0, 1.0, 1.0};
  m.meanfield_den = {1.0, 1.0, 1.0};
  for (int s = 0; s < 16; ++s) {
    m.y.push_back({}), m.den.push_back({});
    for (double t : truth) m.y.back().push_back(t * std::exp(n(rng))), m.den.back().push_back(1.0);
  }
  ClaimSpec c;
  c.fit = FitKind::ratio;
  c.x_key = "encoder_cos";
  c.denominator = "first";
  c.upper = 0.9, c.has_upper = true;
  const ClaimResult all = evaluate(c, m);
  CHECK(all.decision.verdict == Verdict::refuted);  // was supported when only x = 1 was judged
  REQUIRE(all.decided_at);
  CHECK(*all.decided_at == 0.0);
  CHECK(all.estimate.value == Approx(0.97).epsilon(0.03));
  c.decide_at = 1.0;
  const ClaimResult named = evaluate(c, m);
  CHECK(named.decision.verdict == Verdict::supported);
  CHECK(*named.decided_at == 1.0);
  c.decide_at = 0.5;
  CHECK(evaluate(c, m).decision.verdict == Verdict::supported);
}

// Issue 24 1: a statement on unconfirmed equations is reported per setting, with no verdict; a reading's
// verdict speaks of normsim's reading, never of the source.
TEST_CASE("unjudged claims and the words of a reading's verdict", "[check][verdict]") {
  ClaimSpec c = linear_claim(0.5, 0.05);
  const Measurement m = linear_data(0.5, 0.01, 8);
  c.judged = false;
  const ClaimResult r = evaluate(c, m);
  CHECK(r.decision.verdict == Verdict::not_judged);
  CHECK(r.data.size() == m.x.size());  // every setting's result is still reported
  CHECK(verdict_words(Verdict::supported, true) == "consistent with normsim's reading");
  CHECK(verdict_words(Verdict::refuted, true) == "inconsistent with normsim's reading");
  CHECK(verdict_words(Verdict::refuted, false) == "refuted");
  CHECK(verdict_words(Verdict::inconclusive, true) == "inconclusive");
}

// Issue 24 5(b): with m looks at the data every interval is a 1 - 0.05/m interval (Bonferroni over looks):
// wider than the single look's, by the ratio of the t quantiles.
TEST_CASE("a claim read at several sample counts widens its intervals", "[check][verdict]") {
  ClaimSpec c = linear_claim(0.5, 0.05);
  const Measurement m = linear_data(0.5, 0.01, 8);
  const ClaimResult one = evaluate(c, m);
  c.looks = {4, 8};
  c.confidence = 0.975;
  const ClaimResult two = evaluate(c, m);
  const double w1 = one.estimate.high - one.estimate.low, w2 = two.estimate.high - two.estimate.low;
  CHECK(w2 / w1 == Approx(t_quantile(8, 0.975) / t_quantile(8, 0.95)).epsilon(1e-9));
  CHECK(w2 > w1);
}

// A claim's metric may be a quotient of products: entry by entry, NaN where a factor has none.
TEST_CASE("series: products and quotients of metrics", "[check][measure]") {
  normsim::sim::SampleRecord r;
  r.values.assign(normsim::sim::metric::count, {});
  r.values[normsim::sim::metric::gradw_wq] = {2.0, 4.0, 1.0};
  r.values[normsim::sim::metric::gradw_wk] = {3.0, 1.0, 1.0};
  r.values[normsim::sim::metric::gradw_wv] = {1.0, 8.0, std::nan("")};
  const auto q = normsim::check::series(r, "gradw_wq*gradw_wk/gradw_wv");
  CHECK(q[0] == 6.0);
  CHECK(q[1] == 0.5);
  CHECK(std::isnan(q[2]));
  CHECK(normsim::check::factors("gradw_wq*gradw_wk/gradw_wv") ==
        std::vector<std::string>{"gradw_wq", "gradw_wk", "gradw_wv"});
  // Issue 25 2: left to right, ((a * b) / c) / d: this is 1 wherever it is defined (was a*b/(c/d)).
  const auto one = normsim::check::series(r, "gradw_wq*gradw_wk/gradw_wq/gradw_wk");
  CHECK(one[0] == 1.0);
  CHECK(one[1] == 1.0);
  CHECK(normsim::check::series(r, "gradw_wq/gradw_wk/gradw_wk")[0] == Approx(2.0 / 9.0));
}

// gradw_layer: every weight of the layer holding sublayer k, sqrt(sum of squares); a transformer layer is an
// attention sublayer (q, k, v, o) and an MLP sublayer (w1, w2): both get the layer's one value.
TEST_CASE("series: gradw_layer covers every weight of a layer", "[check][measure]") {
  normsim::sim::SampleRecord r;
  const double nan = std::nan("");
  r.values.assign(normsim::sim::metric::count, {});
  for (int id : normsim::check::gradient_metrics()) r.values[std::size_t(id)] = {nan, nan, nan, nan};
  using namespace normsim::sim;
  r.values[metric::gradw_wq] = {1.0, nan, 2.0, nan};
  r.values[metric::gradw_wk] = {1.0, nan, 2.0, nan};
  r.values[metric::gradw_wv] = {1.0, nan, 2.0, nan};
  r.values[metric::gradw_wo] = {1.0, nan, 2.0, nan};
  r.values[metric::gradw_w1] = {nan, 2.0, nan, 1.0};
  r.values[metric::gradw_w2] = {nan, 2.0, nan, 1.0};
  const auto layer = normsim::check::series(r, "gradw_layer", 2);
  CHECK(layer == std::vector<double>{std::sqrt(12.0), std::sqrt(12.0), std::sqrt(18.0), std::sqrt(18.0)});
  const auto sublayer = normsim::check::series(r, "gradw_layer", 1);
  CHECK(sublayer == std::vector<double>{2.0, std::sqrt(8.0), 4.0, std::sqrt(2.0)});
}

// Issue 25 3 (and the review of issue 24): a claim none of whose points has a finite measurement is "no
// finite measurement", never inconclusive with "more samples would decide" (n = 0) nor supported because no
// point refuted it.
TEST_CASE("a claim with no finite measurement gets its own verdict", "[check][verdict]") {
  Measurement m;
  m.x = {1.0, 2.0};
  m.meanfield = {1.0, 1.0};
  m.meanfield_den = {1.0, 1.0};
  const double nan = std::nan("");
  for (int s = 0; s < 8; ++s) m.y.push_back({nan, nan}), m.den.push_back({1.0, 1.0});
  ClaimSpec bound;
  bound.fit = FitKind::bound;
  bound.x_key = "depth";
  bound.upper = 1.0, bound.has_upper = true;
  const ClaimResult b = evaluate(bound, m);
  CHECK(b.decision.verdict == Verdict::no_measurement);
  CHECK(!b.decision.samples_needed);
  CHECK(std::isnan(b.estimate.value));
  ClaimSpec ratio = bound;
  ratio.fit = FitKind::ratio;
  ratio.denominator = "first";
  CHECK(evaluate(ratio, m).decision.verdict == Verdict::no_measurement);
  ClaimSpec slope = linear_claim(0.5, 0.1);
  CHECK(evaluate(slope, m).decision.verdict == Verdict::no_measurement);
  ClaimSpec untestable = bound;
  untestable.testable_at_init = false;  // nothing measured is said, whatever the claim is
  CHECK(evaluate(untestable, m).decision.verdict == Verdict::no_measurement);
  CHECK(to_string(Verdict::no_measurement) == "no finite measurement");
  // A claim "at every x" with one x unmeasured is not supported: inconclusive, the x named (a swept point
  // that overflowed was dropped silently before); once every point is measured it is decided.
  for (auto& row : m.y) row[1] = 0.5;
  const ClaimResult partial = evaluate(bound, m);
  CHECK(partial.decision.verdict == Verdict::inconclusive);
  CHECK_THAT(partial.note, Catch::Contains("No finite measurement at x = 1"));
  CHECK(evaluate(ratio, m).decision.verdict == Verdict::inconclusive);
  for (auto& row : m.y) row[0] = 0.25;
  CHECK(evaluate(bound, m).decision.verdict == Verdict::supported);
  // A refutation at a measured point stands.
  for (auto& row : m.y) row[0] = nan, row[1] = 5.0;
  CHECK(evaluate(bound, m).decision.verdict == Verdict::refuted);
}

// A "last" that meets an entry the record says came out NaN or Inf is NaN: it never falls back to the last
// finite entry before it (a stack that went NaN after layer 0 read as its layer-0 value at "last"). Entries
// a metric does not have (NaN without a record) are still skipped: gradw_w2 at attention sublayers.
TEST_CASE("picks and reductions never step over a non-finite entry", "[check][measure]") {
  using namespace normsim::sim;
  const double nan = std::nan("");
  SampleRecord r;
  r.values.assign(metric::count, {});
  r.values[metric::act_sq] = {1.0, nan, nan};
  r.nonfinite = NonFinite{"forward", 1};
  const auto act = normsim::check::series(r, "act_sq");
  CHECK(std::isnan(normsim::check::pick(act, "last")));
  CHECK(std::isnan(normsim::check::pick(act, "max")));
  CHECK(normsim::check::pick(act, "first") == 1.0);
  SampleRecord t;  // a transformer: w2 only at the MLP sublayers, all finite
  t.values.assign(metric::count, {});
  t.values[metric::gradw_w2] = {nan, 2.0, nan, 3.0, nan};
  CHECK(normsim::check::pick(normsim::check::series(t, "gradw_w2"), "last") == 3.0);
  t.nonfinite_statistics.push_back({metric::gradw_w2, 3});  // came out Inf there: recorded, not a hole
  CHECK(std::isnan(normsim::check::pick(normsim::check::series(t, "gradw_w2"), "last")));
  CHECK(normsim::check::pick(normsim::check::series(t, "gradw_w2"), "first") == 2.0);
}
