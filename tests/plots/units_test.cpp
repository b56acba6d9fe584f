// The pieces under the figures: power-law fits with their CI, CSV reading and quoting, text escaping.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>

#include "plots/csv_table.hpp"
#include "plots/figure.hpp"
#include "plots/fit.hpp"
#include "plots/line_chart.hpp"
#include "plots/metric_labels.hpp"
#include "plots/plot_error.hpp"
#include "plots/text.hpp"
#include "results_fixture.hpp"

using namespace normsim::plots;
using namespace normsim::plots::test;

TEST_CASE("a power law is fitted exactly, with a CI from the Student t quantile", "[plots][fit]") {
  SECTION("exact data: exponent recovered, zero-width CI") {
    const std::vector<double> depth = {4, 8, 16, 32, 64};
    std::vector<double> y;
    for (double K : depth) y.push_back(3.0 * std::pow(K, -0.5));
    const auto fit = fit_power_law(depth, y);
    REQUIRE(fit);
    CHECK(fit->exponent == Approx(-0.5).margin(1e-12));
    CHECK(fit->predict(10) == Approx(3.0 / std::sqrt(10.0)));
    CHECK(fit->exponent_ci95 == Approx(0).margin(1e-10));
  }
  SECTION("noisy data: CI = t_{0.975,n-2} * se(slope), checked by hand") {
    // In log space u = (0, 1, 2) (x = 1, e, e^2), v = (0, 1.1, 1.9): slope 0.95, residuals (0.05, -0.1,
    // 0.05), SSR 0.015, Sxx 2, se = sqrt(0.015 / 1 / 2); t_{0.975,1} = 12.7062047.
    const std::vector<double> x = {1, std::exp(1.0), std::exp(2.0)};
    const std::vector<double> y = {1, std::exp(1.1), std::exp(1.9)};
    const auto fit = fit_power_law(x, y);
    REQUIRE(fit);
    CHECK(fit->exponent == Approx(0.95));
    CHECK(fit->exponent_ci95 == Approx(12.7062047 * std::sqrt(0.0075)).epsilon(1e-6));
  }
  SECTION("two points: a slope without a CI; non-positive values: no fit") {
    const auto two = fit_power_law({2, 4}, {1, 2});
    REQUIRE(two);
    CHECK(two->exponent == Approx(1));
    CHECK(std::isnan(two->exponent_ci95));
    CHECK_FALSE(fit_power_law({2, 4, 8}, {1, 0, 2}));
    CHECK_FALSE(fit_power_law({2}, {1}));
    CHECK_FALSE(fit_power_law({4, 4}, {1, 2}));
  }
}

TEST_CASE("CSV fields with quotes and commas round-trip", "[plots][csv]") {
  TempDir dir("csv");
  const auto path = dir.path() / "t.csv";
  std::ofstream(path) << "a,b,c\n"
                      << csv_field("x,y") << "," << csv_field("say \"hi\"") << ",3\r\n\n1,2,nan\n";
  const CsvTable table = read_csv(path);
  REQUIRE(table.rows.size() == 2);
  CHECK(table.rows[0][0] == "x,y");
  CHECK(table.rows[0][1] == "say \"hi\"");
  CHECK(parse_number(table, 0, 2) == 3);
  CHECK(std::isnan(parse_number(table, 1, 2)));
  CHECK(table.where(1) == path.string() + ":4");
  CHECK_THROWS_AS(parse_number(table, 0, 0), PlotError);
  std::ofstream(path) << "a,b\n1\n";
  CHECK_THROWS_WITH(read_csv(path), Catch::Contains(":2: 1 fields where the header has 2"));
}

TEST_CASE("figure text is escaped for enhanced text, LaTeX and gnuplot strings", "[plots][text]") {
  const Text t = plain_text("gradw_w2 50% {x}");
  CHECK(t.enhanced == "gradw\\_w2 50% \\{x\\}");
  CHECK(t.latex == "gradw\\_w2 50\\% \\{x\\}");
  CHECK(gp_quote("it's") == "'it''s'");
  CHECK(gp_text({"a", "b"}) == "(tex ? 'b' : 'a')");
}

TEST_CASE("one log-axis rule: per metric, whatever the data", "[plots][log]") {
  for (const char* metric : {"act_sq", "grad_sq", "act_mean_abs", "act_max_abs", "branch_sq", "rel_update",
                             "gradw_w1", "gradw_wq"})
    CHECK(metric_log_scale(metric));
  for (const char* metric : {"cos_next", "token_cos", "eff_rank", "an_unknown_metric"})
    CHECK_FALSE(metric_log_scale(metric));
  ChartPanel panel;
  panel.series.push_back({plain_text("a"), "a", {{0, 1, 0, {}}, {1, 0.5, 0, {}}}});
  CHECK_FALSE(chart_log_y(panel));  // within a factor 2, yet the panel follows its flag alone
  panel.log_y = true;
  CHECK(chart_log_y(panel));
  panel.series.front().points = {{0, 0, 0, {}}, {1, -1, 0, {}}};
  CHECK_FALSE(chart_log_y(panel));  // nothing positive: nothing a log axis could show
}
