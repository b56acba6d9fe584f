#include "check/torch_block.hpp"

#include <sys/wait.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "check/child_process.hpp"
#include "io/csv_read.hpp"
#include "io/csv_write.hpp"
#include "sim/metrics.hpp"
#include "sim/run/results.hpp"

namespace normsim::check {

namespace fs = std::filesystem;

namespace {

std::string quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string last_lines(const std::string& text, int n) {
  if (text.empty()) return text;
  std::size_t at = text.size();
  for (int i = 0; i <= n && at != std::string::npos && at > 0; ++i) at = text.rfind('\n', at - 1);
  return at == std::string::npos ? text : text.substr(at + 1);
}

// Each row of a CSV file as column name -> field.
template <class F>
void for_each_row(const fs::path& path, F&& f) {
  std::ifstream in(path);
  if (!in) throw TorchBlockError(path.string() + ": missing (normsim.torch wrote no result)");
  std::string line;
  std::getline(in, line);
  const auto header = io::csv_line_fields(line);
  while (std::getline(in, line)) {
    const auto row = io::csv_line_fields(line);
    const auto at = [&](const std::string& name) -> const std::string& {
      for (std::size_t i = 0; i < header.size() && i < row.size(); ++i)
        if (header[i] == name) return row[i];
      throw TorchBlockError(path.string() + ": no column '" + name + "'");
    };
    f(at);
  }
}

int integer(const std::string& text) {
  int v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

// The bridge's own wall time of one config (its run.json's timings.wall_seconds); a folder without it is not
// one the bridge finished, named as such.
double bridge_seconds(const fs::path& folder) {
  std::ifstream in(folder / "run.json");
  const auto j = nlohmann::json::parse(in, nullptr, false);
  const nlohmann::json::json_pointer at("/timings/wall_seconds");
  if (!(j.is_object() && j.contains(at) && j[at].is_number()))
    throw TorchBlockError((folder / "run.json").string() +
                          ": no timings.wall_seconds, so normsim.torch did not "
                          "finish this config's results");
  return j[at].get<double>();
}

}  // namespace

std::vector<sim::SampleRecord> read_bridge_records(const fs::path& folder, const sim::Config& config) {
  std::vector<sim::SampleRecord> records(static_cast<std::size_t>(config.samples));
  const auto table = sim::metric_table();
  for (std::size_t s = 0; s < records.size(); ++s) {
    records[s].sample = int(s);
    for (const auto& m : table)
      records[s].values.emplace_back(m.index == sim::MetricIndex::stream ? config.depth + 1 : config.depth,
                                     std::numeric_limits<double>::quiet_NaN());
  }
  for_each_row(folder / "layers.csv", [&](const auto& at) {
    const int m = sim::metric_id(at("metric")), s = integer(at("sample"));
    if (m < 0 || s < 0 || s >= config.samples) return;
    const auto& index = table[std::size_t(m)].index == sim::MetricIndex::stream ? at("l") : at("k");
    auto& series = records[std::size_t(s)].values[std::size_t(m)];
    if (const int i = integer(index); i >= 0 && i < int(series.size()))
      series[std::size_t(i)] = std::stod(at("value"));
  });
  for_each_row(folder / "nonfinite.csv", [&](const auto& at) {
    const int s = integer(at("sample")), layer = integer(at("layer"));
    if (s < 0 || s >= config.samples) return;
    auto& r = records[std::size_t(s)];
    if (at("metric").empty())
      r.nonfinite = sim::NonFinite{at("pass"), layer};
    else if (const int m = sim::metric_id(at("metric")); m >= 0)
      r.nonfinite_statistics.push_back({m, layer});
  });
  return records;
}

// The Python the module was built for (python/CMakeLists.txt's Python_EXECUTABLE); NORMSIM_PYTHON
// overrides it. The built `normsim` package is in NORMSIM_PYTHON_DIR.
std::string torch_block_python() {
  const char* given = std::getenv("NORMSIM_PYTHON");
  return given && *given ? given : NORMSIM_PYTHON_EXECUTABLE;
}

TorchBlockRun run_torch_block(const fs::path& file, const std::vector<sim::Config>& configs,
                              const std::string& claim, double timeout_seconds) {
  const char* given = std::getenv("NORMSIM_PYTHON");
  if (!(given && *given) && !fs::exists(fs::path(NORMSIM_PYTHON_DIR) / "normsim" / "__init__.py"))
    throw TorchBlockError(
        "claim '" + claim + "', block " + file.string() +
        ": normsim's Python module is not in this build (" NORMSIM_PYTHON_DIR
        "); configure with -DNORMSIM_PYTHON=ON and -DPython_EXECUTABLE= the Python that has "
        "torch, or set NORMSIM_PYTHON to a Python that imports normsim");
  std::string temp = (fs::temp_directory_path() / "normsim-torch-XXXXXX").string();
  if (!::mkdtemp(temp.data())) throw TorchBlockError(file.string() + ": cannot make a temporary folder");
  const fs::path dir = temp;
  const std::string who = "claim '" + claim + "', block " + file.string();
  sim::Grid grid;
  grid.configs = configs;
  std::ofstream(dir / "request.json") << nlohmann::json{
      {"file", fs::absolute(file).string()},
      {"configs",
       sim::grid_json(grid)["configs"]}}.dump();
  const std::string cmd = "PYTHONPATH=" + quoted(NORMSIM_PYTHON_DIR) + "${PYTHONPATH:+:$PYTHONPATH}; " +
                          "export PYTHONPATH; exec " + quoted(torch_block_python()) +
                          " -m normsim._claim_block " + quoted((dir / "request.json").string()) + " " +
                          quoted((dir / "out").string());
  ChildOutcome done;
  try {
    done = run_child(cmd, dir / "log", timeout_seconds);
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
  if (done.signal != 0) {  // normsim was asked to stop: leave nothing behind, then stop
    fs::remove_all(dir);
    redeliver(done.signal);
    throw Interrupted(who + ": interrupted by signal " + std::to_string(done.signal));
  }
  TorchBlockRun run;
  try {
    if (done.timed_out)
      throw TorchBlockError(who + ": stopped after " + io::format_number(timeout_seconds) +
                            " s (the claim's [torch] timeout)");
    if (done.exit_status != 0)
      throw TorchBlockError(
          who + ": normsim.torch could not measure its blocks (" + torch_block_python() +
          " exited with status " + std::to_string(done.exit_status) +
          "; NORMSIM_PYTHON chooses another Python, one with torch that imports normsim):\n" +
          last_lines(read_all(dir / "log"), 12));
    for (std::size_t c = 0; c < configs.size(); ++c) {
      const fs::path out = dir / "out" / std::to_string(c);
      if (!fs::is_regular_file(out / "layers.csv"))
        throw TorchBlockError(who + ": " + torch_block_python() +
                              " exited without writing the results of config " + std::to_string(c) + ":\n" +
                              last_lines(read_all(dir / "log"), 12));
      run.records.push_back(read_bridge_records(out, configs[c]));
      run.seconds.push_back(bridge_seconds(out));
    }
  } catch (...) {
    fs::remove_all(dir);
    throw;
  }
  fs::remove_all(dir);
  return run;
}

}  // namespace normsim::check
