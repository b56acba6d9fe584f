// Writers of the result files. Rows go out in a fixed order (config, sample, metric in table order, layer)
// so that the same records always give byte-identical files.
#include "sim/run/results.hpp"

#include <sys/resource.h>
#include <chrono>
#include <ctime>

#include "io/atomic_file.hpp"
#include "io/csv_write.hpp"
#include "sim/metrics.hpp"
#include "sim/run/config_schema.hpp"

#ifndef NORMSIM_VERSION
#error "NORMSIM_VERSION must be defined by sim/run/CMakeLists.txt"
#endif
#include "git_commit.hpp"  // NORMSIM_GIT_COMMIT, written at every build (sim/run/CMakeLists.txt)

namespace normsim::sim {

namespace {

// Buffers rows and hands them to an AtomicFile in large pieces.
class CsvOut {
 public:
  explicit CsvOut(const std::filesystem::path& path) : file_(path) {}
  CsvOut& operator<<(std::string_view s) {
    buf_ += s;
    if (buf_.size() > (1 << 20)) flush();
    return *this;
  }
  void commit() {
    flush();
    file_.commit();
  }

 private:
  void flush() {
    file_.write(buf_);
    buf_.clear();
  }
  io::AtomicFile file_;
  std::string buf_;
};

}  // namespace

std::vector<std::string> config_columns(const Grid& grid) {
  std::vector<std::string> cols{"placement"};
  for (const auto& k : grid.swept_keys)
    if (k != "placement") cols.push_back(k);
  return cols;
}

void write_layers_csv(const std::filesystem::path& path, const Grid& grid, const GridRecords& records) {
  CsvOut out(path);
  out << csv_header(ResultTable::layers, grid.configs);
  const std::vector<std::string> columns = key_columns(set_in(grid.configs));
  std::vector<std::string> keys(records.size());
  for (std::size_t c = 0; c < records.size(); ++c) keys[c] = csv_key_fields(grid, c, columns);
  const bool lanes = has_lanes(grid.configs), steps = has_step_column(grid.configs);
  for_each_layer_value(records, [&](const LayerValue& v) {
    out << keys[v.config] << std::to_string(v.sample) << ","
        << csv_metric_fields(v.metric, v.index, steps ? v.step : -1, v.lane, lanes)
        << io::format_number(v.value) << "\n";
  });
  out.commit();
}

void write_summary_csv(const std::filesystem::path& path, const Grid& grid, const GridRecords& records) {
  CsvOut out(path);
  out << csv_header(ResultTable::summary, grid.configs);
  const std::vector<std::string> columns = key_columns(set_in(grid.configs));
  std::vector<std::string> keys(records.size());
  for (std::size_t c = 0; c < records.size(); ++c) keys[c] = csv_key_fields(grid, c, columns);
  const bool lanes = has_lanes(grid.configs), steps = has_step_column(grid.configs);
  for_each_summary(records, [&](const SummaryValue& v) {
    out << keys[v.config] << csv_metric_fields(v.metric, v.index, steps ? v.step : -1, v.lane, lanes)
        << io::format_number(v.summary.mean) << "," << io::format_number(v.summary.se) << ","
        << std::to_string(v.summary.n) << "\n";
  });
  out.commit();
}

// One row per stream (or gradient) where a NaN or Inf first appeared, with an empty metric: every metric
// from there on is missing; and one row per statistic that came out NaN or Inf from a finite stream.
void write_nonfinite_csv(const std::filesystem::path& path, const Grid& grid, const GridRecords& records) {
  CsvOut out(path);
  const bool steps = has_step_column(grid.configs);
  out << (steps ? kNonFiniteStepHeader : kNonFiniteHeader);
  for_each_nonfinite(records, [&](const NonFiniteRow& r) { out << nonfinite_line(r, steps); });
  out.commit();
}

nlohmann::ordered_json grid_json(const Grid& grid) {
  const KeyIsSet is_set = set_in(grid.configs);
  nlohmann::ordered_json configs = nlohmann::ordered_json::array();
  for (std::size_t c = 0; c < grid.configs.size(); ++c) {
    nlohmann::ordered_json values = nlohmann::ordered_json::object();
    for (const auto& k : config_keys())
      if (!k.when_set || is_set(k))  // a grid id as before for grids that leave the newer keys alone
        std::visit([&](const auto& v) { values[std::string(k.name)] = v; }, k.get(grid.configs[c]));
    configs.push_back({{"id", c}, {"values", values}, {"seed", grid.configs[c].seed}});
  }
  return {{"swept_keys", grid.swept_keys}, {"configs", configs}};
}

nlohmann::ordered_json run_json(const Grid& grid, const RunInfo& info) {
  nlohmann::ordered_json j;
  j["normsim_version"] = NORMSIM_VERSION;
  j["git_commit"] = NORMSIM_GIT_COMMIT;
  j["name"] = grid.name;
  j["description"] = grid.description;
  j["config_file"] = grid.config_file;
  j["backend"] = info.backend;
  j["device"] = info.device;
  j["threads"] = info.threads;
  j["peak_memory_bytes"] = info.peak_memory_bytes;
  j["peak_rss_bytes"] = info.peak_rss_bytes;
  j["started"] = info.started;
  double total = 0;
  for (double s : info.config_seconds) total += s;
  j["timings"] = {{"configs_seconds", info.config_seconds},
                  {"total_seconds", total},
                  {"wall_seconds", info.wall_seconds}};
  const nlohmann::ordered_json g = grid_json(grid);
  j["swept_keys"] = g["swept_keys"];
  j["configs"] = g["configs"];
  // The metrics any config computed, with their definitions; and, when a config's `metrics` key is not the
  // default, those metrics again as `asked_metrics` (what `normsim plot` draws by default).
  MetricSet computed;
  bool asked = false;
  for (const Config& c : grid.configs) {
    for (int m = 0; m < metric::count; ++m)
      if (c.metrics.contains(m)) computed.insert(m);
    asked = asked || c.metrics != MetricSet::defaults();
  }
  nlohmann::ordered_json metrics = nlohmann::ordered_json::object();
  for (const auto& name : computed.names())
    metrics[name] = metric_table()[std::size_t(metric_id(name))].definition;
  j["metrics"] = metrics;
  if (asked) j["asked_metrics"] = computed.names();
  return j;
}

void write_run_json(const std::filesystem::path& path, const Grid& grid, const RunInfo& info) {
  io::write_file_atomic(path, run_json(grid, info).dump(2) + "\n");
}

const char* normsim_version() {
  return NORMSIM_VERSION;
}
const char* normsim_git_commit() {
  return NORMSIM_GIT_COMMIT;
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

std::size_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::size_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

}  // namespace normsim::sim
