// The result files of a run (docs/conventions.md, "Result files"): layers.csv, summary.csv, nonfinite.csv
// and run.json, each written atomically. Values that are NaN or Inf never reach a file.
#pragma once
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "sim/config_file.hpp"
#include "sim/record.hpp"

namespace normsim::sim {

// Mean, standard error (sample sd / sqrt(n)) and count of the finite values. With n = 1 no spread can be
// estimated and se is 0 (readers must look at n); with n = 0 mean is NaN and no row is written.
struct Summary {
  double mean = NAN, se = 0;
  int n = 0;
};
Summary summarize(std::span<const double> values);

// What run.json records about the run itself.
struct RunInfo {
  std::string backend;
  int threads = 0;
  std::size_t peak_memory_bytes = 0;   // as reported by the backend (0: not tracked)
  std::size_t peak_rss_bytes = 0;      // of this process
  std::string started;                 // UTC, ISO 8601
  std::vector<double> config_seconds;  // compute time of each config (sum of its units)
  double wall_seconds = 0;             // wall time of the invocation that wrote the files
};

// The identifying columns of a config in layers.csv and summary.csv: placement, then the swept keys
// except placement.
std::vector<std::string> config_columns(const Grid& grid);

// records[c]: every sample of config c, in sample order.
using GridRecords = std::vector<std::vector<SampleRecord>>;

void write_layers_csv(const std::filesystem::path& path, const Grid& grid, const GridRecords& records);
void write_summary_csv(const std::filesystem::path& path, const Grid& grid, const GridRecords& records);
void write_nonfinite_csv(const std::filesystem::path& path, const GridRecords& records);

// The grid as run.json stores it: swept_keys and configs [{id, values: {every key}, seed}].
nlohmann::ordered_json grid_json(const Grid& grid);
nlohmann::ordered_json run_json(const Grid& grid, const RunInfo& info);
void write_run_json(const std::filesystem::path& path, const Grid& grid, const RunInfo& info);

// This build: the CMake project version and the git commit it was built from ("unknown" outside git).
const char* normsim_version();
const char* normsim_git_commit();

// Now, as UTC ISO 8601 ("2025-01-31T12:00:00Z").
std::string utc_now_iso8601();
// Peak resident set size of this process (bytes).
std::size_t peak_rss_bytes();

}  // namespace normsim::sim
