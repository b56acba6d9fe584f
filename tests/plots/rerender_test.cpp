// The saved .gp script is the figure: run by hand next to its CSV, it draws the same files again.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>

#include "plots/render_folder.hpp"
#include "results_fixture.hpp"

namespace fs = std::filesystem;
using namespace normsim::plots;
using namespace normsim::plots::test;

TEST_CASE("each figure's script re-renders it from its CSV alone", "[plots][script]") {
  require_gnuplot();
  TempDir dir("rerender");
  write_results_folder(dir.path());
  PlotOptions options;
  options.quiet = true;
  options.metrics = {"grad_sq", "gradw_w2"};
  options.report = false;
  render_folder(dir.path(), options);
  const fs::path figures = dir.path() / "figures";

  // One figure of each kind: profile, depth scaling, heatmap, multi-panel gradients, claim.
  for (const std::string name :
       {"profile_grad_sq_depth-16", "depth_gradw_w2_last", "heatmap_grad_sq_placement-post",
        "gradients_depth-8", "claim_xiong_pre_gradw2_depth"}) {
    INFO(name);
    TempDir copy("rerender-copy");
    fs::copy_file(figures / (name + ".gp"), copy.path() / (name + ".gp"));
    fs::copy_file(figures / (name + ".csv"), copy.path() / (name + ".csv"));
    const std::string command = "cd '" + copy.path().string() + "' && gnuplot " + name + ".gp 2>&1";
    REQUIRE(std::system(command.c_str()) == 0);
    for (const char* ext : {".pdf", ".svg", ".png"}) {
      INFO(ext);
      REQUIRE(fs::is_regular_file(copy.path() / (name + ext)));
      CHECK(fs::file_size(copy.path() / (name + ext)) > 0);
    }
    CHECK(png_size(copy.path() / (name + ".png")) == png_size(figures / (name + ".png")));
    // Cairo draws deterministically: the same script and data give the same pixels.
    CHECK(read_text(copy.path() / (name + ".png")) == read_text(figures / (name + ".png")));
    CHECK(read_text(copy.path() / (name + ".svg")) == read_text(figures / (name + ".svg")));
  }
}

TEST_CASE("editing the settings line of a script changes the output", "[plots][script]") {
  require_gnuplot();
  TempDir dir("edit");
  write_results_folder(dir.path(), {{"pre", "post"}, {4, 8}, true, false});
  PlotOptions options;
  options.quiet = true;
  options.metrics = {"act_sq"};
  options.report = false;
  render_folder(dir.path(), options);
  const fs::path figures = dir.path() / "figures";
  std::string script = read_text(figures / "profile_act_sq_depth-8.gp");
  const std::string size_line = "width_in = 3.5; height_in = 2.6";
  REQUIRE(script.find(size_line) != std::string::npos);
  script.replace(script.find(size_line), size_line.size(), "width_in = 7; height_in = 3.2");
  const std::string formats_line = "formats = 'pdf svg png'";
  REQUIRE(script.find(formats_line) != std::string::npos);
  script.replace(script.find(formats_line), formats_line.size(), "formats = 'png'");
  {
    std::ofstream out(figures / "profile_act_sq_depth-8.gp");
    out << script;
  }
  fs::remove(figures / "profile_act_sq_depth-8.png");
  const std::string command = "cd '" + figures.string() + "' && gnuplot profile_act_sq_depth-8.gp";
  REQUIRE(std::system(command.c_str()) == 0);
  CHECK(png_size(figures / "profile_act_sq_depth-8.png") == std::pair{2100u, 960u});
}
