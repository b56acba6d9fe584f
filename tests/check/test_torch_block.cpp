// Claims on a PyTorch block (check/torch_block.hpp): the [torch] table of a claim file, and the records read
// back from a results folder as normsim.torch writes it. The run through Python is tests/python/
// test_claim_block.py (skipped without torch).
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "check/child_process.hpp"
#include "check/claim.hpp"
#include "check/torch_block.hpp"
#include "sim/metrics.hpp"

using namespace normsim::check;
namespace fs = std::filesystem;
namespace metric = normsim::sim::metric;

TEST_CASE("a claim's [torch] file is read relative to the claim file", "[check][torch]") {
  const fs::path dir = fs::path(NORMSIM_SOURCE_DIR) / "experiments" / "claims";
  const ClaimSpec c = load_claim(dir / "torch_preln_act_linear.toml");
  CHECK(fs::equivalent(c.torch_file, dir / "blocks" / "preln_mlp.py"));
  CHECK(load_claim(dir / "preln_act_linear_relu.toml").torch_file.empty());
}

TEST_CASE("records come back from a bridge results folder, NaN where it wrote nothing", "[check][torch]") {
  const fs::path dir = fs::temp_directory_path() / "normsim_torch_block_test";
  fs::create_directories(dir);
  // The bridge's columns: every key (those a PyTorch block has none for empty), then sample, metric, l, k.
  std::ofstream(dir / "layers.csv") << "config,placement,block,width,depth,sample,metric,l,k,value\n"
                                       "0,\"my, block\",,8,2,0,act_sq,0,,1.5\n"  // a quoted field
                                       "0,my block,,8,2,1,act_sq,2,,3.25\n"
                                       "0,my block,,8,2,1,cos_next,,1,0.75\n"
                                       "0,my block,,8,2,1,gradw_my_param,,0,9\n";  // not a table metric
  std::ofstream(dir / "nonfinite.csv") << "config,sample,pass,layer,metric\n0,0,forward,1,act_sq\n"
                                          "0,0,forward,2,\n";
  normsim::sim::Config config;
  config.depth = 2;
  config.samples = 3;
  const auto records = read_bridge_records(dir, config);
  REQUIRE(records.size() == 3);
  CHECK(records[2].sample == 2);
  CHECK(records[0].values[metric::act_sq].size() == 3);    // l = 0..K
  CHECK(records[0].values[metric::cos_next].size() == 2);  // k = 0..K-1
  CHECK(records[0].values[metric::act_sq][0] == 1.5);
  CHECK(std::isnan(records[0].values[metric::act_sq][1]));
  CHECK(records[1].values[metric::act_sq][2] == 3.25);
  CHECK(records[1].values[metric::cos_next][1] == 0.75);
  CHECK(std::isnan(records[2].values[metric::act_sq][0]));  // a sample with no row: every value NaN
  REQUIRE(records[0].nonfinite);
  CHECK(records[0].nonfinite->pass == "forward");
  CHECK(records[0].nonfinite->layer == 2);
  REQUIRE(records[0].nonfinite_statistics.size() == 1);
  CHECK(records[0].nonfinite_statistics[0] == normsim::sim::NonFiniteStatistic{metric::act_sq, 1});
  CHECK_FALSE(records[1].nonfinite);
  fs::remove_all(dir);
}

// Issue 25 8: the block's Python runs in its own process group with a time limit; a block that hangs is
// stopped (all of its group) at the limit, and one that exits without results is named with its claim.
TEST_CASE("a child process is stopped at its time limit, its whole group", "[check][torch]") {
  const fs::path dir = fs::temp_directory_path() / "normsim_child_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto t0 = std::chrono::steady_clock::now();
  // The shell starts a grandchild that would outlive a kill of the shell alone.
  const ChildOutcome hung = run_child("sleep 30 & echo $!; wait", dir / "log", 0.5);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(hung.timed_out);
  CHECK(hung.exit_status == -1);
  CHECK(seconds < 5);
  std::ifstream grandchild_log(dir / "log");
  int grandchild = 0;
  grandchild_log >> grandchild;
  REQUIRE(grandchild > 0);
  // The whole group was stopped, not the shell alone: the grandchild is gone, or a zombie its new parent has
  // not reaped yet (state Z in /proc/<pid>/stat), never running or sleeping.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::ifstream stat("/proc/" + std::to_string(grandchild) + "/stat");
  std::string pid_field, name, state;
  if (stat >> pid_field >> name >> state) CHECK(state == "Z");
  const ChildOutcome done = run_child("echo hello; exit 3", dir / "log", 10);
  CHECK_FALSE(done.timed_out);
  CHECK(done.exit_status == 3);
  std::ifstream log(dir / "log");
  std::string line;
  std::getline(log, line);
  CHECK(line == "hello");
  fs::remove_all(dir);
}

TEST_CASE("a block that exits early or hangs is named with its claim", "[check][torch]") {
  const fs::path dir = fs::path(NORMSIM_SOURCE_DIR) / "experiments" / "claims";
  const ClaimSpec c = load_claim(dir / "torch_preln_act_linear.toml");
  CHECK(c.torch_timeout == 600);
  // A "python" that exits at once with status 0, writing nothing.
  ::setenv("NORMSIM_PYTHON", "/bin/true", 1);
  CHECK_THROWS_WITH(run_torch_block(c.torch_file, c.grid.configs, c.id, 10),
                    Catch::Contains("claim 'torch_preln_act_linear', block ") &&
                        Catch::Contains("exited without writing the results of config 0"));
  ::setenv("NORMSIM_PYTHON", "/bin/sleep", 1);  // "sleep -m ..." fails: status 1, named too
  CHECK_THROWS_WITH(
      run_torch_block(c.torch_file, c.grid.configs, c.id, 10),
      Catch::Contains("claim 'torch_preln_act_linear'") && Catch::Contains("exited with status"));
  ::unsetenv("NORMSIM_PYTHON");
}
