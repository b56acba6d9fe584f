// The reference device as a user chooses it: `normsim run --backend reference` (docs/gpu.md, "The reference
// device") writes the results the CPU backend writes for the same grid, within the rounding the backend
// tests allow, and says in run.json which backend and device made them.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "../sim/test_util.hpp"
#include "io/csv_read.hpp"

using normsim::test::quote;
using normsim::test::read_text;
using normsim::test::run_cli;
using normsim::test::ScratchDir;
using normsim::test::write_text;

// Every row of layers.csv names the same configuration, sample, metric and layer on both backends, and its
// value agrees within tests/gpu/test_gpu_backend.cpp's float64 tolerance, |ref - cpu| <= 1e-6 + 1e-4 |cpu|
// (derived there: the backends' Box-Muller draws differ by float ulps, amplified by a few per sublayer). A
// wrong transpose, term or sample shows at O(1).
TEST_CASE("normsim run --backend reference gives the CPU backend's results", "[reference][end-to-end]") {
  ScratchDir dir("reference-cli");
  write_text(dir / "grid.toml",
             "placement = [\"pre\", \"post\", \"peri\"]\nsublayer = [\"transformer\", \"mlp\"]\n"
             "precision = \"float64\"\ndepth = 4\nwidth = 36\ntokens = 11\nheads = 4\nmlp_ratio = 2.0\n"
             "input_corr = 0.2\nsamples = 3\n");
  for (const char* backend : {"reference", "cpu"})
    REQUIRE(run_cli("run " + quote((dir / "grid.toml").string()) + " --out " +
                        quote((dir / backend).string()) + " --backend " + backend + " --quiet --no-plots",
                    dir)
                .status == 0);
  const std::string run_json = read_text(dir / "reference" / "run.json");
  CHECK(run_json.find("\"backend\": \"reference\"") != std::string::npos);
  CHECK(run_json.find("the reference device") != std::string::npos);

  const auto ref = normsim::io::read_csv(dir / "reference" / "layers.csv");
  const auto cpu = normsim::io::read_csv(dir / "cpu" / "layers.csv");
  REQUIRE(ref.header == cpu.header);
  REQUIRE(ref.rows.size() == cpu.rows.size());
  REQUIRE(ref.rows.size() > 6 * 3 * 10);  // 6 configurations x 3 samples x several metrics and layers
  const int value = cpu.require("value");
  for (std::size_t i = 0; i < cpu.rows.size(); ++i) {
    auto key_ref = ref.rows[i], key_cpu = cpu.rows[i];
    key_ref[value].clear(), key_cpu[value].clear();
    REQUIRE(key_ref == key_cpu);
    const double a = normsim::io::parse_number(ref, i, value), b = normsim::io::parse_number(cpu, i, value);
    INFO(cpu.where(i) << ": reference " << a << ", cpu " << b);
    CHECK(std::abs(a - b) <= 1e-6 + 1e-4 * std::abs(b));
  }
}

// Never auto's choice: without a usable CUDA device (CI, this test's machines) auto runs on the CPU backend,
// not on the reference device, which is registered in every build.
TEST_CASE("normsim run with backend auto never chooses the reference device", "[reference][end-to-end]") {
  ScratchDir dir("reference-auto");
  write_text(dir / "c.toml", "depth = 2\nwidth = 8\ntokens = 2\nsamples = 1\n");
  const auto r = run_cli("run " + quote((dir / "c.toml").string()) + " --out " +
                             quote((dir / "out").string()) + " --quiet --no-plots",
                         dir);
  REQUIRE(r.status == 0);
  CHECK(read_text(dir / "out" / "run.json").find("\"backend\": \"reference\"") == std::string::npos);
}

// The dry run's time estimate is the CPU backend's rate per thread: for the reference device, which runs
// plain loops on one host thread whatever --threads says, it gives none and names no thread count.
TEST_CASE("normsim run --dry-run --backend reference gives no CPU time estimate", "[reference][end-to-end]") {
  ScratchDir dir("reference-dry");
  write_text(dir / "c.toml", "depth = 2\nwidth = 8\ntokens = 2\nsamples = 1\n");
  const auto r =
      run_cli("run " + quote((dir / "c.toml").string()) + " --dry-run --backend reference --threads 2", dir);
  REQUIRE(r.status == 0);
  CHECK(r.out.find("backend reference;") != std::string::npos);
  CHECK(r.out.find("no time estimate for the reference backend") != std::string::npos);
  CHECK(r.out.find("estimated CPU time") == std::string::npos);
  const auto cpu =
      run_cli("run " + quote((dir / "c.toml").string()) + " --dry-run --backend cpu --threads 2", dir);
  CHECK(cpu.out.find("backend cpu, 2 threads;") != std::string::npos);
  CHECK(cpu.out.find("estimated CPU time") != std::string::npos);
}
