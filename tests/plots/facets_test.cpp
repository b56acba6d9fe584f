// Small multiples for more than six lines, direct labels, a legend of at most a fifth of the figure, and the
// thin grey reference curves whose legend swatch is drawn in their own style.
#include <catch2/catch.hpp>

#include "plots/facets.hpp"
#include "plots/grouping.hpp"
#include "plots/palette.hpp"
#include "plots/render_folder.hpp"
#include "plots/text.hpp"
#include "results_fixture.hpp"

namespace fs = std::filesystem;
using namespace normsim::plots;
using namespace normsim::plots::test;

namespace {

const std::vector<std::string> zoo = {"post",    "pre",   "peri",   "mix",      "b2t",        "deepnorm",
                                      "lnscale", "admin", "rezero", "spannorm", "hybridnorm", "none"};

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Renders the twelve placements of the zoo at `depths`, PNG only and no report, for one metric.
fs::path render_zoo(const TempDir& dir, const std::vector<int>& depths, const std::string& metric) {
  FixtureOptions fixture;
  fixture.placements = zoo;
  fixture.depths = depths;
  fixture.verdicts = false;
  write_results_folder(dir.path(), fixture);
  PlotOptions options;
  options.quiet = true;
  options.formats = {"png"};
  options.report = false;
  options.metrics = {metric};
  render_folder(dir.path(), options);
  return dir.path() / "figures";
}

}  // namespace

TEST_CASE("more than six lines become facets of at most six: placements by family", "[plots][facets]") {
  const auto facets = facets_of("placement", zoo);
  REQUIRE(facets.size() == 4);
  CHECK(facets[0].title == "norm on the stream");  // post, b2t, deepnorm, admin, spannorm
  CHECK(facets[0].members == std::vector<std::size_t>{0, 4, 5, 7, 9});
  CHECK(facets[1].members == std::vector<std::size_t>{1, 2, 6});  // pre, peri, lnscale
  CHECK(facets[2].members == std::vector<std::size_t>{3, 10});    // mix, hybridnorm
  CHECK(facets[3].members == std::vector<std::size_t>{8, 11});    // rezero, none
  CHECK(facets_of("placement", {"pre", "post"}).size() == 1);
  // Other keys: even runs of consecutive values.
  const auto widths = facets_of("width", {"1", "2", "3", "4", "5", "6", "7", "8"});
  REQUIRE(widths.size() == 2);
  CHECK(widths[0].title == "width = 1 to 4");
  CHECK(widths[1].members.size() == 4);
  // An unknown placement joins "other"; a family of more than six is split.
  std::vector<std::string> many;
  for (int i = 0; i < 8; ++i) many.push_back("custom" + std::to_string(i));
  const auto other = facets_of("placement", many);
  REQUIRE(other.size() == 2);
  CHECK(other[0].title == "other (1)");
  CHECK(other[1].slug == "other2");
  CHECK(facets[0].slug == "stream-norm");
}

// Labels and families come from each built-in's one definition (vocab/builtin_blocks.cpp), the two
// newest included; a name that is no built-in keeps its own text.
TEST_CASE("every built-in placement has its family and its label", "[plots][facets]") {
  const auto facets = facets_of(
      "placement", {"hybridnorm", "olmo2", "pre", "hybridnorm_star", "none", "post", "peri", "admin"});
  REQUIRE(facets.size() == 4);
  CHECK(facets[0].slug == "mixed");
  CHECK(facets[0].members == std::vector<std::size_t>{0, 3});  // hybridnorm, hybridnorm_star
  CHECK(facets[1].slug == "branch-norm");
  CHECK(facets[1].title == "norm on the branch");
  CHECK(facets[1].members == std::vector<std::size_t>{1, 2, 6});  // olmo2, pre, peri
  CHECK(facets[2].slug == "no-norm");
  CHECK(facets[2].members == std::vector<std::size_t>{4});  // none
  CHECK(facets[3].slug == "stream-norm");
  CHECK(facets[3].members == std::vector<std::size_t>{5, 7});  // post, admin
  const auto title = [](const std::string& value) { return value_title("placement", value).enhanced; };
  CHECK(title("olmo2") == plain_text("OLMo 2").enhanced);
  CHECK(title("hybridnorm_star") == plain_text("HybridNorm*").enhanced);
  CHECK(title("lnscale") == plain_text("LN-Scaling").enhanced);
  CHECK(title("custom") == plain_text("custom").enhanced);
  CHECK(value_title("width", "64").enhanced == plain_text("width = 64").enhanced);
}

TEST_CASE("twelve placements: a faceted profile, direct labels, a small legend", "[plots][facets][render]") {
  require_gnuplot();
  TempDir dir("facets");
  const fs::path figures = render_zoo(dir, {8}, "act_sq");
  const std::string gp = read_text(figures / "profile_act_sq.gp");
  CHECK(count(gp, "# facet ") == 4);
  // No panel plots more than six series, so the seven Okabe-Ito colours never repeat within one.
  CHECK(gp.find("for [i=1:7]") == std::string::npos);
  CHECK(gp.find("for [i=1:5] data using 4:(($1==1 && $2==i)") != std::string::npos);
  // Every line is labelled at its end; the legend holds only the mean-field swatch.
  CHECK(count(gp, "set label (100 + k)") == 4);
  CHECK(gp.find("key_n = 1;") != std::string::npos);
  // The shared y label once, left of the middle row: stacked, every panel's own label collided with the next.
  CHECK(count(gp, "set ylabel (facet_col > 0 || facet_row != floor((facet_rows - 1)/2.0) ? '' : ") == 4);
  // One-column facets stack 1.25 in each: 3.5 x 5 in, 1050 x 1500 px.
  CHECK(png_size(figures / "profile_act_sq.png") == std::pair{1050u, 1500u});
}

TEST_CASE("reference curves: thin, grey, behind the data, the legend swatch in their style",
          "[plots][style]") {
  require_gnuplot();
  TempDir dir("reference");
  write_results_folder(dir.path());
  PlotOptions options;
  options.quiet = true;
  options.formats = {"png"};
  options.report = false;
  options.metrics = {"act_sq"};
  render_folder(dir.path(), options);
  const std::string gp = read_text(dir.path() / "figures" / "profile_act_sq_depth-8.gp");
  const std::string style = std::string("lines dt ") + reference_dash + " lw " + reference_width +
                            " lc rgb '" + reference_colour + "'";
  const auto curves = gp.find("? $9 : NaN) with " + style);
  const auto data = gp.find("? $5 : NaN) with linespoints");
  REQUIRE(curves != std::string::npos);
  REQUIRE(data != std::string::npos);
  CHECK(curves < data);  // drawn first: behind the data
  CHECK(gp.find("keyentry with " + style + " title 'mean field'") != std::string::npos);
  // A legend beside the plot may take at most a fifth of its width; else it goes below.
  CHECK(gp.find("*key_entry_in > 0.2*width_in") != std::string::npos);
}

TEST_CASE("twelve placements over depths: a faceted depth-scaling figure", "[plots][facets][render]") {
  require_gnuplot();
  TempDir dir("facets-depth");
  const fs::path figures = render_zoo(dir, {4, 8, 16}, "gradw_w2");
  const std::string gp = read_text(figures / "depth_gradw_w2_last.gp");
  CHECK(count(gp, "# facet ") == 4);
  CHECK(count(gp, "set label (100 + k)") == 4);
  // Its gradients figures: one per family, each with its own legend.
  for (const char* family : {"stream-norm", "branch-norm", "mixed", "no-norm"}) {
    INFO(family);
    CHECK(fs::is_regular_file(figures / ("gradients_depth-8_" + std::string(family) + ".png")));
  }
}

TEST_CASE("lines with identical values are drawn once, their legend entry naming each", "[plots][facets]") {
  ChartPanel panel;
  const std::vector<ChartPoint> points = {{0, 1.0, 0.1, 1.0}, {1, 2.0, 0.1, 2.0}};
  panel.series.push_back({plain_text("loss = readout"), "readout", points});
  panel.series.push_back({plain_text("loss = mse"), "mse", points});
  auto other = points;
  other[1].mean = 2.5;
  panel.series.push_back({plain_text("loss = other"), "other", other});
  const auto panels = facet_panels(panel, "loss");
  REQUIRE(panels.size() == 1);
  REQUIRE(panels[0].series.size() == 2);
  CHECK(panels[0].series[0].title.enhanced == "loss = readout, mse (identical)");
  CHECK(panels[0].series[0].label == "readout");
  CHECK(panels[0].series[1].title.enhanced == "loss = other");
}
