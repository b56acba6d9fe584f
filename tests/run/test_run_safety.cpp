// Issue 16 through the program: --force discards every earlier output, a disk that fills while the
// checkpoint is started leaves an OUT that a run and --resume accept, and an altered part file is refused
// on --resume with its name, then redone once removed; a finished run keeps only its result files, and
// --resume on it does nothing.
#include <catch2/catch.hpp>

#include "sim/backend.hpp"
#include "sim/run/config_file.hpp"
#include "sim/run/sweep.hpp"
#include "tests/sim/test_util.hpp"

using namespace normsim::test;

namespace {
const char* kGrid =
    "placement = [\"pre\", \"post\", \"peri\"]\ndepth = 2\nwidth = 8\ntokens = 2\nsamples = 2\n";

std::string run_args(const ScratchDir& dir, const std::string& extra) {
  return "run " + quote((dir / "grid.toml").string()) + " --out " + quote((dir / "out").string()) +
         " --quiet --no-plots " + extra;
}
}  // namespace

TEST_CASE("a forced run without plots leaves no figure or report of the earlier run") {
  ScratchDir dir("force");
  write_text(dir / "grid.toml", kGrid);
  REQUIRE(run_cli(run_args(dir, ""), dir).status == 0);
  std::filesystem::create_directories(dir / "out" / "figures");
  write_text(dir / "out" / "figures" / "old.png", "x");
  write_text(dir / "out" / "report.html", "old");
  REQUIRE(run_cli(run_args(dir, "--force"), dir).status == 0);
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "figures"));
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "report.html"));
  CHECK(std::filesystem::exists(dir / "out" / "summary.csv"));
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "normsim.lock"));  // released at the end
}

TEST_CASE("a disk that fills while grid.json is written leaves an OUT both a run and --resume accept") {
  ScratchDir dir("fulldisk");
  write_text(dir / "grid.toml", kGrid);
  // ulimit -f 1 (512 bytes) stands for a full disk: grid.json (several KB) cannot be written; SIGXFSZ is
  // ignored so that the write fails with EFBIG instead of killing the process.
  const CliResult full = run_cli(run_args(dir, ""), dir, "trap '' XFSZ; ulimit -f 1");
  CHECK(full.status != 0);
  CHECK(full.err.find("grid.json") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "out"));           // it was absent before
  std::filesystem::create_directories(dir / "out" / "parts");  // as a crash mid-way would leave it
  CHECK(run_cli(run_args(dir, "--resume"), dir).status == 0);
  CHECK(std::filesystem::exists(dir / "out" / "summary.csv"));
}

TEST_CASE("an altered part file is refused on --resume, by name, and redone once removed") {
  ScratchDir dir("altered"), whole("altered-whole");
  write_text(dir / "grid.toml", kGrid);
  write_text(whole / "grid.toml", kGrid);
  REQUIRE(run_cli(run_args(whole, ""), whole).status == 0);
  const std::string before = read_text(whole / "out" / "summary.csv");
  CHECK_FALSE(std::filesystem::exists(whole / "out" / "parts"));  // a finished run is its result files
  // A run interrupted after every unit was saved, before its result files: the checkpoint a crash leaves.
  const normsim::sim::Grid grid = normsim::sim::parse_grid(kGrid, (dir / "grid.toml").string());
  normsim::sim::SweepOptions o;
  o.out = dir / "out";
  o.unit_samples = 1;
  std::filesystem::create_directories(o.out);
  const int unit_samples = normsim::sim::prepare_out(grid, o);
  const auto backend = normsim::sim::make_backend(normsim::vocab::BackendChoice::cpu, 1);
  for (const auto& u : normsim::sim::make_units(grid, unit_samples))
    normsim::sim::save_part(o.out, normsim::sim::run_unit(*backend, grid, u), normsim::sim::grid_id(grid));
  const auto part = dir / "out" / "parts" / "cfg-000001.s0-0.part";
  std::string text = read_text(part);
  text[text.find("act_sq ") + 9] ^= 1;  // one digit of a value
  write_text(part, text);
  const CliResult refused = run_cli(run_args(dir, "--resume"), dir);
  CHECK(refused.status == 1);
  CHECK(refused.err.find("cfg-000001.s0-0.part") != std::string::npos);
  CHECK(refused.err.find("checksum") != std::string::npos);
  std::filesystem::remove(part);
  REQUIRE(run_cli(run_args(dir, "--resume"), dir).status == 0);
  CHECK(read_text(dir / "out" / "summary.csv") == before);
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "parts"));
}

TEST_CASE("a finished run: --resume runs nothing and rewrites nothing; on another grid it is refused") {
  ScratchDir dir("finished");
  write_text(dir / "grid.toml", kGrid);
  REQUIRE(run_cli(run_args(dir, ""), dir).status == 0);
  const auto written = std::filesystem::last_write_time(dir / "out" / "layers.csv");
  const std::string before = read_text(dir / "out" / "layers.csv");
  const CliResult again = run_cli("run " + quote((dir / "grid.toml").string()) + " --out " +
                                      quote((dir / "out").string()) + " --no-plots --resume",
                                  dir);
  CHECK(again.status == 0);
  CHECK(again.err.find("nothing to resume") != std::string::npos);
  CHECK(std::filesystem::last_write_time(dir / "out" / "layers.csv") == written);
  CHECK(read_text(dir / "out" / "layers.csv") == before);
  const CliResult other = run_cli(run_args(dir, "--resume --set depth=3"), dir);
  CHECK(other.status == 2);
  CHECK(other.err.find("finished run of another grid") != std::string::npos);
  CHECK(other.err.find("key 'depth' was 2, now 3") != std::string::npos);
}
