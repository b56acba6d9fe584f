// The result files of a run (docs/conventions.md, "Result files"): layers.csv, summary.csv, nonfinite.csv
// and run.json, each written atomically; their columns are defined in result_rows.hpp. Values that are NaN or
// Inf never reach a file.
#pragma once
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "sim/record.hpp"
#include "sim/run/config_file.hpp"
#include "sim/run/result_rows.hpp"

namespace normsim::sim {

// What run.json records about the run itself.
struct RunInfo {
  std::string backend;
  std::string device;  // Backend::device(): the hardware the numbers come from
  int threads = 0;
  std::size_t peak_memory_bytes = 0;   // as reported by the backend (0: not tracked)
  std::size_t peak_rss_bytes = 0;      // of this process
  std::string started;                 // UTC, ISO 8601
  std::vector<double> config_seconds;  // compute time of each config (sum of its units)
  double wall_seconds = 0;             // wall time of the invocation that wrote the files
};

// The keys that tell a grid's configs apart, for messages and --dry-run: placement, then the swept keys
// except placement. (The result files hold every key: result_rows.hpp.)
std::vector<std::string> config_columns(const Grid& grid);

void write_layers_csv(const std::filesystem::path& path, const Grid& grid, const GridRecords& records);
void write_summary_csv(const std::filesystem::path& path, const Grid& grid, const GridRecords& records);
void write_nonfinite_csv(const std::filesystem::path& path, const Grid& grid, const GridRecords& records);

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
