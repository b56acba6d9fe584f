// Issue 16 through the program: --force discards every earlier output, a disk that fills while the
// checkpoint is started leaves an OUT that a run and --resume accept, and an altered part file is refused
// on --resume with its name, then redone once removed.
#include <catch2/catch.hpp>

#include "test_util.hpp"

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
  ScratchDir dir("altered");
  write_text(dir / "grid.toml", kGrid);
  REQUIRE(run_cli(run_args(dir, "--unit-samples 1"), dir).status == 0);
  const std::string before = read_text(dir / "out" / "summary.csv");
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
}
