// The pieces under the figures (fits: tests/stats; CSV: tests/io): text escaping, axes, labels.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <string>
#include <utility>

#include "plots/figure.hpp"
#include "plots/line_chart.hpp"
#include "plots/metric_labels.hpp"
#include "plots/text.hpp"

using namespace normsim::plots;

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

// A stream that overflows spans 70 decades: the labels are listed every 15 decades with no minor tics,
// since gnuplot 5.4 never finishes a log axis with an increment of 1e9 or more.
TEST_CASE("a log axis over 72 decades draws in finite time", "[plots][log]") {
  const std::string tics = normsim::plots::log_axis_tics("y", 1.0, 1e72, 5);
  CHECK(tics.find("set ytics (1e0, 1e15, 1e30, 1e45, 1e60)") != std::string::npos);
  CHECK(tics.find("set mytics 1") != std::string::npos);
  CHECK(normsim::plots::log_axis_tics("y", 1.0, 1e5, 5).find("mytics") == std::string::npos);
  // 5.3 decades holding 10^1..10^5: every decade labelled, not every other one (a colour bar with two
  // labels).
  CHECK(normsim::plots::log_axis_tics("cb", 1.5, 3e5, 5).find("set cbtics (1e1, 1e2, 1e3, 1e4, 1e5)") !=
        std::string::npos);
}

// A colour bar over 0.76 to 2 was labelled 1 and 2 only (issue 30): at least three labels, whatever the
// range.
TEST_CASE("a narrow log axis has at least three labels", "[plots][log]") {
  for (const auto& [lo, hi] : {std::pair{0.761, 2.0},
                               {0.7085, 1.1229},
                               {0.9, 1.1},
                               {0.99, 1.01},
                               {1.0, 3.0},
                               {0.3, 2.0},
                               {2.0, 9.0}}) {
    const std::string tics = log_axis_tics("cb", lo, hi, 5);
    const auto open = tics.find("set cbtics ("), close = tics.find(')', open);
    REQUIRE(open != std::string::npos);
    const std::string labels = tics.substr(open, close - open);
    CHECK(std::count(labels.begin(), labels.end(), ',') >= 2);
    CHECK(labels.find("0000000") == std::string::npos);  // 0.3, never 0.30000000000000004
  }
}

// A figure's CSV is data other programs read: its numbers read back as the same doubles (they were written
// with 12 digits); NaN stays an empty field, gnuplot's missing value.
TEST_CASE("figure CSV numbers round-trip", "[plots][csv]") {
  for (const double x : {0.1 + 0.2, 1.0 / 3.0, 0.915241404741123, 1.901688923122303e19, 5e-324})
    CHECK(std::strtod(csv_number(x).c_str(), nullptr) == x);  // strtod: stod throws on subnormals
  CHECK(csv_number(std::nan("")).empty());
  CHECK(script_number(0.30000000000000004) == "0.3");
}
