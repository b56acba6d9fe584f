// The coordinate check's fits and verdicts (check/coord.hpp) on synthetic result files whose exponents are
// known, and `normsim coord`'s arguments to `run` (app/coord_command.hpp) with a stand-in run.
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>

#include "app/coord_command.hpp"
#include "check/coord.hpp"
#include "cli/command_line.hpp"
#include "io/csv_read.hpp"
#include "plots/coord_figures.hpp"

using namespace normsim::check;
namespace fs = std::filesystem;

namespace {

constexpr int kSamples = 8;
constexpr double kNoise = 0.05;  // sd of ln(value) at each point

// layers.csv of a width sweep: act_mean_abs at l = 0..2, steps 0 and 1, value = c_s width^b e^noise, with
// b = 0 (muP; and SP at step 0) or 1 (SP at step >= 1, l >= 1); the input x_0 (l = 0) flat.
void write_width_sweep(const fs::path& out) {
  fs::create_directories(out);
  std::ofstream f(out / "layers.csv");
  f << "config,placement,update,parametrization,init,width,sample,metric,l,k,step,value\n";
  std::mt19937_64 rng(20261127);
  std::normal_distribution<double> noise(0, kNoise);
  int config = 0;
  for (const char* p : {"mup", "none"})
    for (int width : {64, 128, 256}) {
      for (int s = 0; s < kSamples; ++s)
        for (int step = 0; step <= 1; ++step)
          for (int l = 0; l <= 2; ++l) {
            const double b = std::string(p) == "none" && step == 1 && l > 0 ? 1 : 0;
            const double v = (1 + 0.1 * s) * std::pow(width, b) * std::exp(l == 0 ? 0 : noise(rng));
            f << config << ",pre,adam," << p << ",fanin," << width << "," << s << ",act_mean_abs," << l
              << ",," << step << "," << v << "\n";
          }
      ++config;
    }
}

const CoordFit& find(const CoordResult& r, const std::string& setting, const std::string& layers, int step) {
  for (const auto& f : r.fits)
    if (f.setting == setting && f.layers == layers && f.step == step) return f;
  FAIL("no fit " << setting << " " << layers << " " << step);
  return r.fits.front();
}

}  // namespace

TEST_CASE("coord_fit_synthetic", "[coord]") {
  const fs::path out = fs::temp_directory_path() / "normsim-test-coord-width";
  fs::remove_all(out);
  write_width_sweep(out);
  const CoordResult r = coord_fits(out, "width");
  CHECK(r.fits.size() == 2 * 2 * 4);  // settings x steps x (l = 0, 1, 2, mean)
  for (const auto& f : r.fits) {
    INFO(f.setting << " " << f.layers << " step " << f.step);
    REQUIRE(f.exponent);
    const bool grows = f.setting == "parametrization=none" && f.step == 1 && f.layers != "0";
    // The known exponent, within 4 of the fit's own standard errors (per-sample slope se = 0.05/sqrt(S_xx),
    // S_xx = 2 ln(2)^2: 0.051, over 8 samples 0.018; 4 se leave a chance of 6e-5 of a false failure).
    CHECK(std::abs(f.exponent->value - (grows ? 1.0 : 0.0)) < 4 * f.exponent->se + 1e-12);
    CHECK(f.exponent->n == kSamples);
  }
  // muP at step 1: predicted 0, band +-1/2 (SP's lower bound 1): supported. SP (none with init fanin):
  // predicted 1, band [1/2, inf): supported. x_0 and step 0 (every preset 0, no band): not judged.
  CHECK(find(r, "parametrization=mup", "1", 1).decision.verdict == Verdict::supported);
  CHECK(find(r, "parametrization=mup", "mean", 1).predicted == 0.0);
  const auto& sp = find(r, "parametrization=none", "2", 1);
  CHECK(sp.parametrization == "sp");
  CHECK(sp.predicted == 1.0);
  CHECK(sp.decision.verdict == Verdict::supported);
  CHECK(find(r, "parametrization=none", "0", 1).decision.verdict == Verdict::not_judged);
  CHECK(find(r, "parametrization=mup", "1", 0).decision.verdict == Verdict::not_judged);
  CHECK(r.lines.size() == 2 * 3 * 2);  // settings x widths x steps
  write_coord(out, r);
  const auto verdicts = normsim::io::read_csv(out / "coord" / "verdicts.csv");
  REQUIRE(verdicts.rows.size() == 2);
  for (const auto& row : verdicts.rows) CHECK(row[std::size_t(verdicts.require("verdict"))] == "supported");
  CHECK(coord_summary(r).find("2 supported, 0 refuted") != std::string::npos);
  // The figures read those files: per setting a lines figure (a line per width) and an exponent figure whose
  // dashed reference is the prediction at the judged steps (SP: 1 at step 1).
  const auto figures = normsim::plots::coord_figures(out);
  REQUIRE(figures.size() == 4);
  CHECK(figures[0].name == "coord_lines_act_mean_abs_parametrization_mup");
  CHECK(figures[3].name == "coord_exponent_act_mean_abs_parametrization_none");
  CHECK(figures[0].csv.find(",256,") != std::string::npos);
  CHECK(figures[3].csv.find(",1\n") != std::string::npos);  // the reference column, last
  fs::remove_all(out);
}

TEST_CASE("coord_depth_groups", "[coord]") {
  // rel_update of completep: x_1 - x_0 = m_L^-1 F_0, so the value at k = 0 scales as depth^-1 exactly.
  const fs::path out = fs::temp_directory_path() / "normsim-test-coord-depth";
  fs::remove_all(out);
  fs::create_directories(out);
  {
    std::ofstream f(out / "layers.csv");
    f << "config,placement,update,parametrization,depth,sample,metric,l,k,value\n";
    for (int depth : {4, 8, 16})
      for (int s = 0; s < 4; ++s)
        for (int k = 0; k < depth; ++k)
          f << depth << ",pre,adam,completep," << depth << "," << s << ",rel_update,," << k << ","
            << (1 + 0.1 * s) * 4.0 / depth * (1 + 0.01 * k) << "\n";
  }
  const CoordResult r = coord_fits(out, "depth");
  REQUIRE(r.fits.size() == 3);  // k = 0, last, mean
  const auto& first = find(r, "", "0", 0);
  CHECK(first.exponent->value == Approx(-1).margin(1e-12));
  CHECK(first.predicted == -1.0);
  CHECK(first.decision.verdict == Verdict::supported);
  CHECK(find(r, "", "last", 0).decision.verdict == Verdict::not_judged);
  CHECK_THROWS_WITH(coord_fits(out, "tokens"), Catch::Contains("width or depth"));
  fs::remove_all(out);
}

TEST_CASE("coord_command_runs_run", "[coord]") {
  const fs::path out = fs::temp_directory_path() / "normsim-test-coord-command";
  fs::remove_all(out);
  std::vector<std::string> seen;
  const auto run = [&](const std::vector<std::string>& args) {
    seen = args;
    write_width_sweep(out);
    return 0;
  };
  const int rc = normsim::app::coord_command(
      {"c.toml", "--sweep", "width=64,128,256", "--out", out.string(), "--no-plots", "--force", "-q"}, run);
  CHECK(rc == 0);
  const std::vector<std::string> expected = {
      "c.toml", "--out", out.string(), "--set", "width=[64,128,256]", "--no-plots", "--force", "-q"};
  CHECK(seen == expected);
  CHECK(fs::exists(out / "coord" / "fits.csv"));
  // --dry-run goes to run, which prints the plan; there is nothing to fit.
  fs::remove_all(out);
  const auto plan_only = [&](const std::vector<std::string>&) { return 0; };
  CHECK(normsim::app::coord_command({"c.toml", "--sweep", "depth=4,8", "--out", out.string(), "--dry-run"},
                                    plan_only) == 0);
  CHECK_FALSE(fs::exists(out / "coord"));
  for (const char* bad : {"width=64", "tokens=4,8", "width=64,x", "width=0,8"})
    CHECK_THROWS_AS(normsim::app::coord_command({"c.toml", "--sweep", bad, "--out", out.string()}, run),
                    normsim::cli::UsageError);
  fs::remove_all(out);
}
