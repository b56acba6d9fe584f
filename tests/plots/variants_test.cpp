// A run of `variants` (experiments/README.md, "Variants"): the label names the lines, the keys that vary with
// it split nothing, and a line with no mean field says so in a depth figure whose other lines have one.
#include <catch2/catch.hpp>

#include "results_fixture.hpp"

namespace fs = std::filesystem;
using namespace normsim::plots::test;

TEST_CASE("variants: one line per label, and 'no mean field' where a line has none", "[plots][variants]") {
  require_gnuplot();
  TempDir dir("variants");
  FixtureOptions options{{"pre", "post", "b2t"}, {4, 8, 16}, true, false};
  options.variants = true;  // norm varies with the label: layernorm, rmsnorm, layernorm
  write_results_folder(dir.path(), options);
  const auto [status, err] = run_plot_command(
      {dir.path().string(), "--metric", "act_sq", "--format", "png", "--quiet", "--no-report"});
  INFO(err);
  REQUIRE(status == 0);
  const fs::path figures = dir.path() / "figures";
  // One figure per metric and depth: norm, determined by the label, makes no figures of its own.
  CHECK(fs::is_regular_file(figures / "depth_act_sq_last.png"));
  CHECK(fs::is_regular_file(figures / "profile_act_sq_depth-8.png"));
  for (const auto& entry : fs::directory_iterator(figures)) {
    INFO(entry.path());
    CHECK(entry.path().filename().string().find("norm-") == std::string::npos);
  }
  const std::string gp = read_text(figures / "depth_act_sq_last.gp");
  INFO(gp);
  // The label itself titles each line (not "label = ..."); the first variant has theory.csv, the others not.
  CHECK(gp.find("variant pre: ") != std::string::npos);
  CHECK(gp.find("label = ") == std::string::npos);
  CHECK(gp.find("variant pre: {/:Italic K}^{") != std::string::npos);
  CHECK(gp.find(", no mean field") != std::string::npos);
  CHECK(gp.find("variant post: {/:Italic K}^{") != std::string::npos);
  CHECK(gp.find("mean field") != std::string::npos);
  CHECK(gp.find("fitted growth") == std::string::npos);
  // Three lines at one depth drawn side by side: x times 1.05^(i - 2) for line i = 1, 2, 3.
  CHECK(gp.find("using ($4*1.05**(i-(3+1)/2.0)):") != std::string::npos);
  const std::string csv = read_text(figures / "depth_act_sq_last.csv");
  INFO(csv);
  CHECK(csv.find("variant b2t") != std::string::npos);
}
