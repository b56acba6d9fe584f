// The pieces under the figures (fits: tests/stats; CSV: tests/io): text escaping, axes, labels.
#include <catch2/catch.hpp>
#include <string>

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
