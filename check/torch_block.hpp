// Claims on a user's PyTorch block (issue 11): a claim file's [torch] table names a Python file defining
// blocks(config), and normsim.torch (python/normsim/torch.py) measures those blocks for every config of the
// claim instead of the simulator. The configs go to `python3 -m normsim._claim_block` as JSON; the results
// folders it writes come back as SampleRecords, so the claim is evaluated, reported and drawn like any other
// (docs/claims.md, "Claims on a PyTorch block").
#pragma once
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/config.hpp"
#include "sim/record.hpp"
#include "sim/run/result_rows.hpp"

namespace normsim::check {

// Python could not measure the blocks (no torch, an error in the file): what() names the file and ends
// with Python's last lines of output.
class TorchBlockError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every config's records (samples 0..samples-1) as normsim.torch measures the blocks of `file` for claim
// `claim` (named in every error), in a child process given `timeout_seconds` (check/child_process.hpp):
// past it, or on SIGINT/SIGTERM/SIGHUP, the child's group is stopped and its temporary folder removed.
// The interpreter that runs a claim's PyTorch blocks: NORMSIM_PYTHON, else the one the module was built for.
std::string torch_block_python();

// What the child measured: every config's records, and each config's wall time as the bridge timed it (its
// run.json's timings.wall_seconds).
struct TorchBlockRun {
  sim::GridRecords records;
  std::vector<double> seconds;
};
TorchBlockRun run_torch_block(const std::filesystem::path& file, const std::vector<sim::Config>& configs,
                              const std::string& claim, double timeout_seconds);

// The records of one config from a results folder written by normsim.torch (layers.csv, nonfinite.csv):
// `config.samples` records sized for `config.depth`. Metrics outside the metric table (gradw_<parameter> of
// the user's own names) are left out.
std::vector<sim::SampleRecord> read_bridge_records(const std::filesystem::path& folder,
                                                   const sim::Config& config);

}  // namespace normsim::check
