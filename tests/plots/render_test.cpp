// Every figure kind renders into non-empty PDF, SVG and PNG files of the chosen size, beside its CSV and
// script, and the report embeds them.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "plots/render_folder.hpp"
#include "results_fixture.hpp"

namespace fs = std::filesystem;
using namespace normsim::plots;
using namespace normsim::plots::test;

namespace {

// The figures the fixture (pre/post x depths 4, 8, 16; five metrics; two claims) must produce with "all".
std::vector<std::string> expected_figures() {
  std::vector<std::string> names;
  for (const char* metric : {"act_sq", "grad_sq", "cos_next", "gradw_w1", "gradw_w2"}) {
    for (const char* depth : {"4", "8", "16"})
      names.push_back(std::string("profile_") + metric + "_depth-" + depth);
    names.push_back(std::string("depth_") + metric + "_last");
  }
  for (const char* depth : {"4", "8", "16"}) names.push_back(std::string("gradients_depth-") + depth);
  for (const char* metric : {"act_sq", "grad_sq"})
    for (const char* placement : {"pre", "post"})
      names.push_back(std::string("heatmap_") + metric + "_placement-" + placement);
  for (const auto& id : fixture_claim_ids()) names.push_back("claim_" + id);
  return names;
}

void check_figure(const fs::path& figures, const std::string& name, unsigned png_w, unsigned png_h,
                  double pdf_w, double pdf_h) {
  INFO("figure " << name);
  for (const char* ext : {".pdf", ".svg", ".png", ".csv", ".gp"}) {
    INFO("file " << name << ext);
    REQUIRE(fs::is_regular_file(figures / (name + ext)));
    CHECK(fs::file_size(figures / (name + ext)) > 0);
  }
  CHECK(png_size(figures / (name + ".png")) == std::pair{png_w, png_h});
  const auto [w, h] = pdf_page_size(figures / (name + ".pdf"));
  // gnuplot rounds the page to whole points.
  CHECK(w == Approx(pdf_w).margin(0.6));
  CHECK(h == Approx(pdf_h).margin(0.6));
  CHECK(read_text(figures / (name + ".svg")).find("<svg") != std::string::npos);
}

// Hidden staging folders or temporary files left in the figures folder mean a half-finished write.
void check_nothing_half_written(const fs::path& figures) {
  for (const auto& entry : fs::directory_iterator(figures)) {
    INFO(entry.path());
    CHECK(entry.path().filename().string().front() != '.');
  }
}

}  // namespace

TEST_CASE("every figure kind renders at one-column size with a report", "[plots][render]") {
  require_gnuplot();
  TempDir dir("render");
  write_results_folder(dir.path());
  PlotOptions options;
  options.quiet = true;
  options.metrics = {"all"};
  render_folder(dir.path(), options);

  const fs::path figures = dir.path() / "figures";
  const auto expected = expected_figures();
  for (const auto& name : expected) {
    // The three-panel gradients figure stacks its panels at one-column width, 1.6 in each (docs/figures.md).
    if (name.rfind("gradients", 0) == 0)
      check_figure(figures, name, 1050, 1440, 252, 345.6);
    else
      check_figure(figures, name, 1050, 780, 252, 187.2);
  }
  // Nothing beyond the expected figures: 5 files each.
  std::size_t files = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(figures)) ++files;
  CHECK(files == expected.size() * 5);
  check_nothing_half_written(figures);

  // Not SECTIONs: Catch would render the folder again for each one.
  {  // the scripts and data say what the figure shows
    const std::string depth_gp = read_text(figures / "depth_gradw_w2_last.gp");
    // Pre's last-layer gradw_w2 ~ K^(-1/2) (the fixture's wiggle moves it slightly), Post's is flat.
    CHECK(depth_gp.find("Pre: {/:Italic K}^{−0.5") != std::string::npos);
    CHECK(depth_gp.find("Post: {/:Italic K}^{") != std::string::npos);
    CHECK(depth_gp.find("set logscale y") != std::string::npos);
    CHECK(read_text(figures / "profile_act_sq_depth-8.gp").find("theory") != std::string::npos);
    // One y scale per metric at every depth (docs/figures.md): act_sq spans 1 to 5 at depth 4 and 1 to 17
    // at depth 16, grad_sq one decade at 4 and three at 16: log at every depth; cos_next linear.
    for (const char* depth : {"4", "8", "16"}) {
      INFO("depth " << depth);
      for (const char* metric : {"act_sq", "grad_sq", "gradw_w1", "gradw_w2"})
        CHECK(read_text(figures / ("profile_" + std::string(metric) + "_depth-" + depth + ".gp"))
                  .find("set logscale y") != std::string::npos);
      CHECK(read_text(figures / ("profile_cos_next_depth-" + std::string(depth) + ".gp"))
                .find("set logscale y") == std::string::npos);
      // The gradients figure's three panels: every panel log.
      const std::string gp = read_text(figures / ("gradients_depth-" + std::string(depth) + ".gp"));
      std::size_t log_panels = 0;
      for (auto at = gp.find("set logscale y"); at != std::string::npos;
           at = gp.find("set logscale y", at + 1))
        ++log_panels;
      CHECK(log_panels == 3);
    }
    // Heatmaps of a log metric have a log colour scale.
    CHECK(read_text(figures / "heatmap_act_sq_placement-pre.gp").find("set logscale cb") !=
          std::string::npos);
    const std::string csv = read_text(figures / "profile_act_sq_depth-8.csv");
    CHECK(csv.rfind("panel,series,label,x,mean,se,lo,hi,reference\n", 0) == 0);
    CHECK(csv.find("1,1,pre,8,9,0.45,8.55,9.45,9\n") !=
          std::string::npos);  // pre: act_sq = 1 + l, theory too
  }

  {  // the report links the figures (thumbnails), lists them in its contents, and holds config and verdicts
    const std::string html = read_text(dir.path() / "report.html");
    CHECK(html.find("data:image") == std::string::npos);  // linked, not embedded
    CHECK(html.find("<img loading=\"lazy\" alt=\"profile_act_sq_depth-8\" "
                    "src=\"figures/profile_act_sq_depth-8.png\">") != std::string::npos);
    CHECK(html.find("<a href=\"figures/profile_act_sq_depth-8.pdf\">") != std::string::npos);
    CHECK(html.find("<li><a href=\"#per-layer-profiles\">Per-layer profiles</a> (15)</li>") !=
          std::string::npos);
    CHECK(html.find("xiong_pre_gradw2_depth") != std::string::npos);
    CHECK(html.find("layernorm") != std::string::npos);  // a shared setting from run.json
    // Verdicts: the tally, coloured verdict cells, band and prediction columns as in check's report.md.
    CHECK(html.find("<p class=\"tally\">2 claims: 0 supported, 0 refuted, 1 inconclusive, 1 confirmed</p>") !=
          std::string::npos);
    CHECK(html.find("<td class=\"inconclusive\">inconclusive (~40 samples would decide)</td>") !=
          std::string::npos);
    CHECK(html.find("<td>1 (mean field 1.01)</td><td>[0.99, inf]</td><td>stated principle: 1 % of the mean "
                    "field</td><td>1 [0.98, 1.02] at x = 8</td><td>16</td>") != std::string::npos);
    CHECK(html.find("<a href=\"#claim_post_act_sq_flat\">") != std::string::npos);
    // The page stays small whatever the figures weigh: 37 figures here, their PNGs about 4 MB together.
    CHECK(fs::file_size(dir.path() / "report.html") < 64 * 1024);
    const std::string md = read_text(dir.path() / "report.md");
    CHECK(md.find("## Verdicts") != std::string::npos);
    CHECK(md.find("![depth_gradw_w2_last](figures/depth_gradw_w2_last.png)") != std::string::npos);
  }
}

TEST_CASE("two-column size, chosen formats, metrics and a LaTeX version", "[plots][render]") {
  require_gnuplot();
  TempDir dir("two-column");
  write_results_folder(dir.path(), {{"pre", "post"}, {4, 8, 16}, true, false});
  const auto [status, err] = run_plot_command({dir.path().string(), "--metric", "grad_sq", "--size",
                                               "two-column", "--latex", "--format", "pdf,png", "--quiet",
                                               "--heatmap-layer", "raw", "--depth-at-first-layer"});
  INFO(err);
  REQUIRE(status == 0);
  const fs::path figures = dir.path() / "figures";
  for (const std::string name : {"profile_grad_sq_depth-4", "gradients_depth-16", "depth_grad_sq_last",
                                 "depth_grad_sq_first", "heatmap_grad_sq_placement-post"}) {
    INFO(name);
    CHECK(png_size(figures / (name + ".png")) == std::pair{2100u, 960u});
    const auto [w, h] = pdf_page_size(figures / (name + ".pdf"));
    CHECK(w == Approx(504).margin(0.6));
    CHECK(h == Approx(230.4).margin(0.6));
    CHECK_FALSE(fs::exists(figures / (name + ".svg")));
    CHECK(read_text(figures / (name + "-tex.tex")).find("\\includegraphics") != std::string::npos);
    CHECK(fs::file_size(figures / (name + "-tex.pdf")) > 0);
  }
  // Only the metric asked for, and no claims without verdicts.json.
  CHECK_FALSE(fs::exists(figures / "profile_act_sq_depth-4.csv"));
  CHECK_FALSE(fs::exists(figures / "heatmap_act_sq_placement-pre.csv"));
  // The gradients figure keeps only the gradient metrics that were asked for: one panel (the legend is a
  // plot of its own, so every line chart is a multiplot; panels are marked "# panel <p>").
  CHECK(read_text(figures / "gradients_depth-16.gp").find("# panel") == std::string::npos);
  CHECK(read_text(figures / "gradients_depth-16.gp").find("TE2[") == std::string::npos);
  // --heatmap-layer raw: the x axis is the layer itself, up to the deepest profile's last layer.
  CHECK(read_text(figures / "heatmap_grad_sq_placement-post.gp").find("set xrange [-0.5:16.5]") !=
        std::string::npos);
}

TEST_CASE("one placement and one depth: a single line per profile, no depth figures", "[plots][render]") {
  require_gnuplot();
  TempDir dir("single");
  write_results_folder(dir.path(), {{"pre"}, {8}, false, false});
  PlotOptions options;
  options.quiet = true;
  options.formats = {"png"};
  options.metrics = {"act_sq", "gradw_w2"};
  render_folder(dir.path(), options);
  const fs::path figures = dir.path() / "figures";
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(figures))
    if (entry.path().extension() == ".png") names.insert(entry.path().stem().string());
  CHECK(names == std::set<std::string>{"profile_act_sq", "profile_gradw_w2", "gradients"});
}

TEST_CASE("claims_only draws exactly the claim figures and nothing else", "[plots][render][claims]") {
  require_gnuplot();
  TempDir dir("claims-only");
  write_results_folder(dir.path());
  PlotOptions options;
  options.quiet = true;
  options.formats = {"png"};
  options.claims_only = true;
  options.report = false;  // what `normsim check` asks for: its report.md is its own
  render_folder(dir.path(), options);
  std::set<std::string> names, expected;
  for (const auto& entry : fs::directory_iterator(dir.path() / "figures"))
    names.insert(entry.path().filename());
  for (const auto& id : fixture_claim_ids())
    for (const char* ext : {".png", ".csv", ".gp"}) expected.insert("claim_" + id + ext);
  CHECK(names == expected);
  CHECK_FALSE(fs::exists(dir.path() / "report.md"));

  // What `normsim check` asks for: the claim figures and report.html beside check's own report.md,
  // which is left as it was.
  std::ofstream(dir.path() / "report.md") << "check's own report\n";
  options.report = true;
  options.report_markdown = false;
  render_folder(dir.path(), options);
  CHECK(read_text(dir.path() / "report.md") == "check's own report\n");
  CHECK(read_text(dir.path() / "report.html").find("<html") != std::string::npos);
  options.report = false;

  // Without verdicts.json there is nothing to draw: an input error, and nothing written.
  TempDir bare("claims-only-bare");
  write_results_folder(bare.path(), {{"pre"}, {4, 8}, true, false});
  CHECK_THROWS_WITH(render_folder(bare.path(), options), Catch::Contains("verdicts.json"));
  CHECK_FALSE(fs::exists(bare.path() / "figures"));
  const auto [status, err] =
      run_plot_command({dir.path().string(), "--claims-only", "--quiet", "--no-report"});
  CHECK(status == 0);
}

TEST_CASE("legends, log axes, tics, theory and claim labels in the scripts", "[plots][render][style]") {
  require_gnuplot();
  TempDir dir("style");
  write_results_folder(dir.path());
  PlotOptions options;
  options.quiet = true;
  options.formats = {"png"};
  options.report = false;
  render_folder(dir.path(), options);
  const fs::path figures = dir.path() / "figures";

  // The legend is a plot of its own beside or under the charts: no chart draws a key over its data.
  for (const std::string name : {"profile_act_sq_depth-8", "gradients_depth-8", "depth_gradw_w2_last",
                                 "claim_xiong_pre_gradw2_depth"}) {
    INFO(name);
    const std::string gp = read_text(figures / (name + ".gp"));
    CHECK(gp.find("set key inside left top") != std::string::npos);
    CHECK(gp.find("if (key_below) { set origin 0, 0; set size 1, key_h }") != std::string::npos);
    CHECK(gp.find("set key outside") == std::string::npos);
    CHECK(gp.find("set key top") == std::string::npos);
  }
  {  // theory: drawn for every series of every panel, one "mean field" legend entry for the figure
    const std::string gp = read_text(figures / "gradients_depth-8.gp");
    const std::string profile = read_text(figures / "profile_act_sq_depth-8.gp");
    CHECK(profile.find("for [i=1:2] data using 4:(($1==1 && $2==i) ? $9 : NaN) with lines dt") !=
          std::string::npos);
    std::size_t entries = 0;
    for (auto at = profile.find("title 'mean field'"); at != std::string::npos;
         at = profile.find("title 'mean field'", at + 1))
      ++entries;
    CHECK(entries == 1);
    CHECK(gp.find("keyentry") != std::string::npos);
  }
  {  // depth scaling on log x: tics at the swept depths; log y within a decade: explicit 1-2-5 tics
    const std::string gp = read_text(figures / "depth_gradw_w2_last.gp");
    CHECK(gp.find("set xtics (4, 8, 16)") != std::string::npos);
    const auto tics = gp.find("set ytics (");
    REQUIRE(tics != std::string::npos);
    const std::string list = gp.substr(tics, gp.find(')', tics) - tics);
    CHECK(std::count(list.begin(), list.end(), ',') >= 1);  // at least two labelled values
  }
  {  // claims: the metric's symbol, the verdict and the fitted exponent with its CI, the prediction
    const std::string gp = read_text(figures / "claim_xiong_pre_gradw2_depth.gp");
    CHECK(gp.find("‖∂{/:Italic L}/∂{/:Italic W}_2‖_F") != std::string::npos);
    CHECK(gp.find("confirmed: exponent ") != std::string::npos);
    CHECK(gp.find("−0.49") != std::string::npos);
    CHECK(gp.find(" ± ") != std::string::npos);
    CHECK(gp.find("predicted (−0.5)") != std::string::npos);
    CHECK(gp.find("set xtics (4, 8, 16)") != std::string::npos);
    // A claim without a metric keeps its own label.
    CHECK(read_text(figures / "claim_post_act_sq_flat.gp").find("E[x\\_l\\^2]") != std::string::npos);
  }
}

TEST_CASE("claim figures: y labels, profile titles, legend below, single x and the supported band",
          "[plots][render][claims]") {
  require_gnuplot();
  TempDir dir("claim-style");
  write_results_folder(dir.path());
  // Three claims as `normsim check` writes them: a profile fit, a one-depth ratio with a band, a power law.
  nlohmann::json verdicts = nlohmann::json::array();
  verdicts.push_back({{"id", "cos_profile"},
                      {"verdict", "supported"},
                      {"fit", "profile"},
                      {"figure_kind", "profile"},
                      {"metric", "cos_next"},
                      {"predicted", 0.0},
                      {"measured", -0.00413},
                      {"ci_low", -0.00906},
                      {"ci_high", 0.000799},
                      {"band_low", -0.02},
                      {"band_high", 0.02},
                      {"x_label", "sublayer t"},
                      {"y_label", "cos(x_t, x_t+1)"}});
  verdicts.push_back({{"id", "one_depth"},
                      {"verdict", "refuted"},
                      {"fit", "ratio"},
                      {"figure_kind", "points"},
                      {"metric", "gradw_w2"},
                      {"predicted", 7.0},
                      {"measured", 1.3},
                      {"ci_low", 1.01},
                      {"ci_high", 1.68},
                      {"band_low", 4.9},
                      {"band_high", 9.1},
                      {"x_label", "depth K"},
                      {"y_label", "||dW2|| layer 50 / layer 1"}});
  verdicts.push_back({{"id", "exponent"},
                      {"verdict", "supported"},
                      {"fit", "powerlaw"},
                      {"figure_kind", "scaling"},
                      {"metric", "gradw_w2"},
                      {"predicted", -0.5},
                      {"measured", -0.548},
                      {"ci_low", -0.577},
                      {"ci_high", -0.519},
                      {"band_low", -0.6},
                      {"band_high", -0.4},
                      {"x_label", "depth K"},
                      {"y_label", "||dL/dW2|| of the last layer"},
                      {"log_x", true},
                      {"log_y", true}});
  // A one-sided band the data do not reach (a paired difference claimed >= 0, measured below it).
  verdicts.push_back({{"id", "one_sided"},
                      {"verdict", "refuted"},
                      {"fit", "bound"},
                      {"figure_kind", "points"},
                      {"metric", "gradw_w2"},
                      {"predicted", 0.0},
                      {"measured", -0.572},
                      {"ci_low", -0.667},
                      {"ci_high", -0.476},
                      {"band_low", 0.0},
                      {"band_high", nullptr},
                      {"x_label", "placement"},
                      {"y_label", "difference"}});
  // A profile fit drawn as points over a swept key (the routed MLP against k): its band bounds the relative
  // deviation from the mean field, so it is said in the legend, not shaded around y = 0.
  verdicts.push_back({{"id", "profile_points"},
                      {"verdict", "supported"},
                      {"fit", "profile"},
                      {"figure_kind", "points"},
                      {"metric", "branch_sq"},
                      {"predicted", 0.0},
                      {"measured", 0.002},
                      {"ci_low", -0.012},
                      {"ci_high", 0.016},
                      {"band_low", -0.05},
                      {"band_high", 0.05},
                      {"band_relative", true},
                      {"x_label", "k"},
                      {"y_label", "branch second moment"}});
  // A statement about trained models: its band is drawn for reference, not as a supported range.
  nlohmann::json untestable = verdicts[1];
  untestable["id"] = "untestable";
  untestable["verdict"] = "not testable at init";
  verdicts.push_back(untestable);
  { std::ofstream(dir.path() / "verdicts.json") << verdicts.dump(2); }
  for (const char* id : {"cos_profile", "one_depth", "exponent", "untestable", "one_sided", "profile_points"})
    fs::create_directories(dir.path() / "claims" / id);
  std::ofstream(dir.path() / "claims" / "one_sided" / "data.csv")
      << "x,measured,se,predicted\n0,-0.194,0.008,0\n1,-0.572,0.048,0\n";
  std::ofstream(dir.path() / "claims" / "profile_points" / "data.csv")
      << "x,measured,se,predicted\n1,0.357,0.002,0.356\n2,0.197,0.001,0.197\n";
  std::ofstream(dir.path() / "claims" / "untestable" / "data.csv")
      << "x,measured,se,predicted\n100,1.3,0.16,7\n";
  std::ofstream(dir.path() / "claims" / "cos_profile" / "data.csv")
      << "x,measured,se,predicted\n0,0.81,0.002,0.816\n1,0.86,0.002,0.866\n2,0.89,0.002,0.894\n";
  std::ofstream(dir.path() / "claims" / "one_depth" / "data.csv")
      << "x,measured,se,predicted\n100,1.3,0.16,7\n";
  std::ofstream(dir.path() / "claims" / "exponent" / "data.csv")
      << "x,measured,se,predicted\n8,60,1,60\n16,41,1,42.4\n32,28,1,30\n";
  PlotOptions options;
  options.quiet = true;
  options.formats = {"png"};
  options.report = false;
  options.claims_only = true;
  render_folder(dir.path(), options);
  const fs::path figures = dir.path() / "figures";
  for (const char* id : {"cos_profile", "one_depth", "exponent"}) {
    INFO(id);
    CHECK(fs::file_size(figures / ("claim_" + std::string(id) + ".png")) > 0);
    // The legend is under the plot, which gets the full width.
    CHECK(read_text(figures / ("claim_" + std::string(id) + ".gp")).find("key_below = 1 || ") !=
          std::string::npos);
  }

  const std::string profile = read_text(figures / "claim_cos_profile.gp");
  // 1. No partial symbol: the claim's own label, escaped (x_t must not subscript).
  CHECK(profile.find("cos(x\\_t, x\\_t+1)") != std::string::npos);
  CHECK(profile.find("{/:Italic k}") == std::string::npos);
  // 2. A profile fit: the deviation from the mean field, to the CI's precision; the legend says "mean field".
  CHECK(profile.find("supported: max deviation from mean field −0.0041 ± 0.0049") != std::string::npos);
  CHECK(profile.find(": 'mean field; supported: within ± 0.02')") != std::string::npos);
  CHECK(profile.find("predicted (") == std::string::npos);
  CHECK(profile.find("set object 1 rect") == std::string::npos);  // its band is not in y units

  const std::string points = read_text(figures / "claim_profile_points.gp");
  CHECK(points.find(": 'mean field; supported: within ± 5 %')") != std::string::npos);
  CHECK(points.find("set object 1 rect") == std::string::npos);

  const std::string one = read_text(figures / "claim_one_depth.gp");
  CHECK(one.find("||dW2|| layer") != std::string::npos);
  CHECK(one.find("∂") == std::string::npos);
  CHECK(one.find("predicted (7)") != std::string::npos);
  // 4. One x: a range around it, not autoscaled onto the axis; the supported range shaded and in the y range.
  CHECK(one.find("set xrange [75:125]") != std::string::npos);
  CHECK(one.find("set autoscale x") == std::string::npos);
  CHECK(one.find("set object 1 rect from graph 0, first 4.9 to graph 1, first 9.1 behind") !=
        std::string::npos);
  CHECK(one.find("title 'supported range'") != std::string::npos);
  CHECK(one.find("set yrange [0:10]") != std::string::npos);
  CHECK(one.find("unset object 1; unset xlabel") != std::string::npos);  // not drawn in the legend's plot

  // The band lies above all the data: a tenth of the range is added on its side, so it shows.
  const std::string one_sided = read_text(figures / "claim_one_sided.gp");
  CHECK(one_sided.find("set object 1 rect from graph 0, first 0 to graph 1, graph 1 behind") !=
        std::string::npos);
  CHECK(one_sided.find("set yrange [-0.8:0.2]") != std::string::npos);

  const std::string untested = read_text(figures / "claim_untestable.gp");
  CHECK(untested.find("title 'claimed range (not judged at init)'") != std::string::npos);
  CHECK(untested.find("title 'supported range'") == std::string::npos);

  const std::string exponent = read_text(figures / "claim_exponent.gp");
  // A clean replacement keeps the symbol; ratio/powerlaw/linear keep "predicted (value)".
  CHECK(exponent.find("‖∂{/:Italic L}/∂{/:Italic W}_2‖_F (last layer)") != std::string::npos);
  CHECK(exponent.find("predicted (−0.5)") != std::string::npos);
  CHECK(exponent.find("supported: exponent −0.548 ± 0.029") != std::string::npos);
  CHECK(exponent.find("set object 1 rect") == std::string::npos);  // an exponent's band is not a y range
}

TEST_CASE("by default a small set of metrics; the figure list only with --verbose", "[plots][render]") {
  require_gnuplot();
  TempDir dir("default-set");
  write_results_folder(dir.path());
  const auto [status, said] = run_plot_command({dir.path().string(), "--format", "png", "--no-report"});
  CHECK(status == 0);
  const fs::path figures = dir.path() / "figures";
  // act_sq, grad_sq and gradw_w2 (the default set) are drawn; cos_next and gradw_w1 only when asked for.
  CHECK(fs::is_regular_file(figures / "profile_act_sq_depth-8.png"));
  CHECK(fs::is_regular_file(figures / "profile_gradw_w2_depth-8.png"));
  CHECK(fs::is_regular_file(figures / "depth_grad_sq_last.png"));
  CHECK_FALSE(fs::exists(figures / "profile_cos_next_depth-8.png"));
  CHECK_FALSE(fs::exists(figures / "depth_gradw_w1_last.png"));
  // One progress line on stderr, no list of figures.
  CHECK(said.find("normsim plot: drawing ") != std::string::npos);
  CHECK(said.find("figures/profile_act_sq") == std::string::npos);

  const auto [verbose_status, listed] =
      run_plot_command({dir.path().string(), "--format", "png", "--no-report", "--verbose"});
  CHECK(verbose_status == 0);
  CHECK(listed.find("  figures/profile_act_sq_depth-8 (profile)") != std::string::npos);

  // "all" draws every metric (a flag after --metric ends its list of values).
  const auto [all_status, all_said] =
      run_plot_command({dir.path().string(), "--metric", "all", "-q", "--format", "png", "--no-report"});
  CHECK(all_status == 0);
  CHECK(all_said.empty());
  CHECK(fs::is_regular_file(figures / "profile_cos_next_depth-8.png"));
}
