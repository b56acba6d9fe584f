// The real CPU backend through the normsim program: a small grid end to end, a run that overflows (it
// finishes, says where, and never writes NaN or Inf into a result file), and identical files for 1 and 2
// threads.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "test_util.hpp"

using normsim::test::read_text;
using normsim::test::ScratchDir;
using normsim::test::write_text;

namespace {

// env: assignments put before the command ("NAME=value"), or "".
int run_normsim(const std::string& args, const ScratchDir& dir, const std::string& env = "") {
  const std::string cmd = env + (env.empty() ? "" : " ") + std::string(NORMSIM_BINARY_DIR) + "/normsim " +
                          args + " >" + (dir / "stdout").string() + " 2>" + (dir / "stderr").string();
  const int rc = std::system(cmd.c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

bool has_nonfinite_text(const std::string& csv) {
  for (const char* bad : {"nan", "NaN", "inf", "Inf"})
    if (csv.find(bad) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("a grid runs end to end on the CPU backend", "[end-to-end]") {
  ScratchDir dir("e2e-grid");
  write_text(dir / "grid.toml",
             "placement = [\"pre\", \"post\", \"b2t\"]\nsublayer = \"transformer\"\ndepth = 4\nwidth = 16\n"
             "tokens = 4\nheads = 2\nsamples = 2\n");
  const auto out = dir / "out";
  REQUIRE(
      run_normsim("run " + (dir / "grid.toml").string() + " --out " + out.string() + " --quiet --no-plots",
                  dir) == 0);
  const std::string summary = read_text(out / "summary.csv");
  for (const char* p : {",pre,", ",post,", ",b2t,"}) CHECK(summary.find(p) != std::string::npos);
  for (const char* m : {",act_sq,", ",grad_sq,", ",cos_next,", ",token_cos,", ",eff_rank,", ",gradw_wq,",
                        ",gradw_w2,", ",rel_update,", ",branch_sq,", ",act_max_abs,"})
    CHECK(summary.find(m) != std::string::npos);
  CHECK_FALSE(has_nonfinite_text(read_text(out / "layers.csv")));
  CHECK(read_text(out / "run.json").find("\"git_commit\"") != std::string::npos);
}

// No norm and weights with gain 30: the stream's second moment multiplies by ~(30^4 / 2) per sublayer and
// leaves float32's range within a few sublayers.
TEST_CASE("an overflowing run finishes, says where, and writes no NaN or Inf", "[end-to-end]") {
  ScratchDir dir("e2e-overflow");
  write_text(dir / "grid.toml",
             "placement = \"none\"\nfinal_norm = \"false\"\ndepth = 24\nwidth = 16\ntokens = 4\nsamples = 2\n"
             "init_gain = 30.0\n");
  const auto out = dir / "out";
  REQUIRE(
      run_normsim("run " + (dir / "grid.toml").string() + " --out " + out.string() + " --quiet --no-plots",
                  dir) == 0);
  const std::string nonfinite = read_text(out / "nonfinite.csv");
  INFO(nonfinite);
  CHECK(nonfinite.find("forward") != std::string::npos);
  CHECK(read_text(dir / "stderr").find("forward") != std::string::npos);  // the run warns
  CHECK_FALSE(has_nonfinite_text(read_text(out / "layers.csv")));
  CHECK_FALSE(has_nonfinite_text(read_text(out / "summary.csv")));
  // Finite layers before the overflow are still reported.
  CHECK(read_text(out / "summary.csv").find(",act_sq,0,,") != std::string::npos);
}

// The second grid has one sample and products of several column blocks: its two threads work inside the
// sample (split GEMMs and draws), and the files must still be the same.
TEST_CASE("1 and 2 threads write byte-identical result files", "[end-to-end]") {
  for (const char* grid :
       {"placement = [\"pre\", \"admin\"]\nactivation = \"gelu\"\ndepth = 6\nwidth = 24\ntokens = 5\n"
        "samples = 3\n",
        "placement = [\"pre\", \"post\"]\nsublayer = \"transformer\"\nactivation = [\"gelu\", \"swiglu\"]\n"
        "depth = 4\nwidth = 320\ntokens = 4\nsamples = 1\n"}) {
    ScratchDir dir("e2e-threads");
    write_text(dir / "grid.toml", grid);
    for (const char* t : {"1", "2"}) {
      REQUIRE(run_normsim("run " + (dir / "grid.toml").string() + " --out " +
                              (dir / ("out" + std::string(t))).string() + " --threads " + t +
                              " --quiet --no-plots",
                          dir) == 0);
    }
    CHECK(read_text(dir / "out1" / "layers.csv") == read_text(dir / "out2" / "layers.csv"));
    CHECK(read_text(dir / "out1" / "summary.csv") == read_text(dir / "out2" / "summary.csv"));
  }
}

// Without --threads the run uses OpenMP's default (OMP_NUM_THREADS when set), and run.json records the
// count the backend ran on, not another default (sim::resolved_threads, the one definition of both).
TEST_CASE("OMP_NUM_THREADS sets the threads and run.json records the count that ran", "[end-to-end]") {
  ScratchDir dir("e2e-omp");
  write_text(dir / "grid.toml", "depth = 2\nwidth = 8\ntokens = 2\nsamples = 1\n");
  for (const int threads : {1, 3}) {
    const auto out = dir / ("out" + std::to_string(threads));
    REQUIRE(run_normsim("run " + (dir / "grid.toml").string() + " --out " + out.string() +
                            " --backend cpu --quiet --no-plots",
                        dir, "OMP_NUM_THREADS=" + std::to_string(threads)) == 0);
    const auto run = nlohmann::json::parse(read_text(out / "run.json"));
    CHECK(run.at("threads").get<int>() == threads);
    const std::string device = run.at("device").get<std::string>();
    CHECK(device.ends_with(", " + std::to_string(threads) + (threads == 1 ? " thread" : " threads")));
  }
}

// A relative OUT (the README's own examples) with figures drawn: every path survives the change of
// directory into the figure staging folder.
TEST_CASE("a run into a relative folder draws its figures", "[end-to-end]") {
  ScratchDir dir("e2e-relative");
  write_text(dir / "grid.toml", "placement = \"pre\"\ndepth = [2, 4]\nwidth = 8\ntokens = 3\nsamples = 2\n");
  const std::string cmd = "cd " + dir.path().string() + " && " + std::string(NORMSIM_BINARY_DIR) +
                          "/normsim run grid.toml --out out/rel --quiet > log 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  INFO(read_text(dir / "log"));
  CHECK(read_text(dir / "log").find("not drawn") == std::string::npos);
  CHECK(std::filesystem::exists(dir / "out" / "rel" / "figures" / "profile_act_sq.pdf"));
  CHECK(std::filesystem::exists(dir / "out" / "rel" / "report.html"));
}

// A grid of MLP and attention sublayers: the attention stacks have no W1/W2, so their gradients figure has
// only the grad_sq panel (it used to ask gnuplot for empty gradw panels, which failed the figure).
TEST_CASE("a grid mixing MLP and attention draws a gradients figure for each", "[end-to-end]") {
  ScratchDir dir("e2e-mixed-sublayers");
  write_text(dir / "grid.toml",
             "placement = [\"pre\", \"post\"]\nsublayer = [\"mlp\", \"attention\"]\ndepth = 4\nwidth = "
             "8\ntokens = 3\n"
             "samples = 2\n");
  const std::string cmd = std::string(NORMSIM_BINARY_DIR) + "/normsim run " + (dir / "grid.toml").string() +
                          " --out " + (dir / "out").string() + " --quiet > " + (dir / "log").string() +
                          " 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  INFO(read_text(dir / "log"));
  CHECK(read_text(dir / "log").find("not drawn") == std::string::npos);
  const auto figures = dir / "out" / "figures";
  REQUIRE(std::filesystem::exists(figures / "gradients_sublayer-mlp.pdf"));
  REQUIRE(std::filesystem::exists(figures / "gradients_sublayer-attention.pdf"));
  // The figure's CSV numbers its panels: grad_sq and gradw_w2 for MLP; grad_sq alone for attention.
  CHECK(read_text(figures / "gradients_sublayer-mlp.csv").find("\n2,") != std::string::npos);
  CHECK(read_text(figures / "gradients_sublayer-attention.csv").find("\n2,") == std::string::npos);
}

// The `metrics` key: only the metrics named are computed and written (summary.csv, layers.csv, theory.csv),
// the same values as a run computing every metric, and `normsim plot` draws those by default.
TEST_CASE("a run with metrics = [act_sq, cos_next] writes and draws only those", "[end-to-end]") {
  ScratchDir dir("e2e-metrics");
  write_text(dir / "grid.toml", "placement = \"pre\"\ndepth = [2, 4]\nwidth = 8\ntokens = 3\nsamples = 2\n");
  const std::string grid = (dir / "grid.toml").string();
  REQUIRE(run_normsim("run " + grid + " --out " + (dir / "all").string() + " --quiet --no-plots", dir) == 0);
  REQUIRE(run_normsim("run " + grid + " --out " + (dir / "two").string() +
                          " --quiet --set 'metrics=[act_sq,cos_next]'",
                      dir) == 0);
  const auto metrics_in = [](const std::string& csv) {
    std::set<std::string> names;
    for (const std::string m :
         {"act_sq", "grad_sq", "cos_next", "token_cos", "eff_rank", "gradw_w2", "branch_sq"})
      if (csv.find(std::string(",").append(m).append(",")) != std::string::npos) names.insert(m);
    return names;
  };
  const std::set<std::string> two{"act_sq", "cos_next"};
  CHECK(metrics_in(read_text(dir / "two" / "summary.csv")) == two);
  CHECK(metrics_in(read_text(dir / "two" / "layers.csv")) == two);
  CHECK(metrics_in(read_text(dir / "two" / "theory.csv")) == two);
  CHECK(metrics_in(read_text(dir / "all" / "summary.csv")).size() == 7);
  // The same numbers as the full run: every row of the smaller file is a row of the larger.
  const std::string all = read_text(dir / "all" / "layers.csv");
  std::istringstream rows(read_text(dir / "two" / "layers.csv"));
  int n = 0;
  for (std::string row; std::getline(rows, row); ++n) CHECK(all.find(row + "\n") != std::string::npos);
  CHECK(n > 10);
  const std::string run_json = read_text(dir / "two" / "run.json");
  CHECK(run_json.find("\"asked_metrics\"") != std::string::npos);
  CHECK(read_text(dir / "all" / "run.json").find("\"asked_metrics\"") == std::string::npos);
  // The figures of the named metrics, not the small default set.
  const auto figures = dir / "two" / "figures";
  CHECK(std::filesystem::exists(figures / "profile_cos_next.pdf"));
  CHECK(std::filesystem::exists(figures / "profile_act_sq.pdf"));
  CHECK_FALSE(std::filesystem::exists(figures / "profile_grad_sq.pdf"));
}
