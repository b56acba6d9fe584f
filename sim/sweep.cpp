// The sweep engine: units, part files (the checkpoint), resume, and the final files.
#include "sim/sweep.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <fstream>
#include <sstream>

#include "sim/atomic_file.hpp"
#include "sim/config_schema.hpp"
#include "sim/csv.hpp"
#include "sim/metrics.hpp"
#include "sim/progress.hpp"

namespace normsim::sim {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPartMagic = "normsim-part 1";
constexpr std::string_view kGridFormat = "normsim-grid 1";
constexpr std::array<std::string_view, 4> kFinalFiles{"run.json", "layers.csv", "summary.csv",
                                                      "nonfinite.csv"};

fs::path parts_dir(const fs::path& out) {
  return out / "parts";
}
fs::path grid_file(const fs::path& out) {
  return parts_dir(out) / "grid.json";
}

// The first difference between the grid stored by an earlier run and this one, or "".
std::string grid_difference(const nlohmann::ordered_json& was, const nlohmann::ordered_json& now) {
  if (was.value("swept_keys", nlohmann::ordered_json()) != now["swept_keys"])
    return "the swept keys were " + was.value("swept_keys", nlohmann::ordered_json()).dump() + ", now " +
           now["swept_keys"].dump();
  const auto& a = was.value("configs", nlohmann::ordered_json::array());
  const auto& b = now["configs"];
  if (a.size() != b.size())
    return "the grid had " + std::to_string(a.size()) + " configs, now " + std::to_string(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) {
    const auto& va = a[i].value("values", nlohmann::ordered_json::object());
    const auto& vb = b[i]["values"];
    for (const auto& [k, v] : vb.items()) {
      if (!va.contains(k)) return "config " + std::to_string(i) + ": key '" + k + "' is new";
      if (va[k] != v)
        return "config " + std::to_string(i) + ": key '" + k + "' was " + va[k].dump() + ", now " + v.dump();
    }
    for (const auto& [k, v] : va.items())
      if (!vb.contains(k)) return "config " + std::to_string(i) + ": key '" + k + "' is gone";
  }
  return "";
}

void remove_stale_temps(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (is_atomic_temp(e.path())) fs::remove(e.path(), ec);
}

[[noreturn]] void damaged(const std::string& source, std::size_t line, const std::string& why) {
  throw std::runtime_error(source + ":" + std::to_string(line) + ": damaged unit records: " + why +
                           " (a part file: delete it and run again with --resume to redo that unit)");
}

double parse_double(std::string_view s, bool& ok) {
  double x = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  ok = ec == std::errc() && end == s.data() + s.size();
  return x;
}

std::string describe_config(const Grid& grid, int c) {
  std::string s;
  for (const auto& col : config_columns(grid))
    s += (s.empty() ? "" : ", ") + col + "=" + format_value(find_key(col)->get(grid.configs[c]));
  return s;
}

}  // namespace

std::string Unit::part_name() const {
  char buf[64];
  std::snprintf(buf, sizeof buf, "cfg-%06d.s%d-%d.part", config, begin, end - 1);
  return buf;
}

std::vector<Unit> make_units(const Grid& grid, int unit_samples) {
  std::vector<Unit> units;
  for (std::size_t c = 0; c < grid.configs.size(); ++c) {
    const int n = grid.configs[c].samples;
    const int step = unit_samples > 0 ? unit_samples : n;
    for (int b = 0; b < n; b += step) units.push_back({static_cast<int>(c), b, std::min(n, b + step)});
  }
  return units;
}

UnitResult run_unit(Backend& backend, const Grid& grid, const Unit& unit) {
  if (unit.config < 0 || static_cast<std::size_t>(unit.config) >= grid.configs.size())
    throw std::out_of_range("unit of config " + std::to_string(unit.config) + " outside the grid");
  std::vector<int> samples(unit.end - unit.begin);
  for (int i = 0; i < unit.end - unit.begin; ++i) samples[i] = unit.begin + i;
  const auto t0 = std::chrono::steady_clock::now();
  UnitResult r{unit, backend.run(grid.configs[unit.config], samples), 0};
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string who = "backend '" + backend.name() + "', config " + std::to_string(unit.config);
  if (r.records.size() != samples.size())
    throw std::runtime_error(who + ": returned " + std::to_string(r.records.size()) + " records for " +
                             std::to_string(samples.size()) + " samples");
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (r.records[i].sample != samples[i])
      throw std::runtime_error(who + ": record " + std::to_string(i) + " is sample " +
                               std::to_string(r.records[i].sample) + ", expected " +
                               std::to_string(samples[i]));
    if (r.records[i].values.size() > metric_table().size())
      throw std::runtime_error(who + ": a record holds more metrics than the metric table");
  }
  return r;
}

std::string encode_unit(const UnitResult& result) {
  const Unit& u = result.unit;
  std::string s(kPartMagic);
  s += "\nconfig " + std::to_string(u.config) + "\nsamples " + std::to_string(u.begin) + " " +
       std::to_string(u.end) + "\nseconds " + format_number(result.seconds) + "\n";
  for (const auto& r : result.records) {
    s += "record " + std::to_string(r.sample) + " " + std::to_string(r.values.size());
    if (r.nonfinite) s += " nonfinite " + r.nonfinite->pass + " " + std::to_string(r.nonfinite->layer);
    s += "\n";
    for (std::size_t m = 0; m < r.values.size(); ++m) {
      s.append(metric_table()[m].name).append(" ").append(std::to_string(r.values[m].size()));
      for (double v : r.values[m]) s.append(" ").append(format_number(v));
      s.append("\n");
    }
  }
  s += "end\n";
  return s;
}

UnitResult decode_unit(const std::string& text, const Unit& unit, const std::string& source) {
  std::istringstream in(text);
  const std::string& path = source;
  UnitResult result{unit, {}, 0};
  std::string line, word;
  std::size_t n = 0;
  const auto next = [&](std::string_view what) -> std::istringstream {
    if (!std::getline(in, line)) damaged(path, n, "ends before " + std::string(what));
    ++n;
    return std::istringstream(line);
  };
  if (next("its header").str() != kPartMagic) damaged(path, n, "not a normsim part file");
  int config = -1, begin = -1, end = -1;
  next("config") >> word >> config;
  if (word != "config" || config != unit.config)
    damaged(path, n, "expected config " + std::to_string(unit.config));
  next("samples") >> word >> begin >> end;
  if (word != "samples" || begin != unit.begin || end != unit.end)
    damaged(path, n, "sample range does not match");
  {
    auto ls = next("seconds");
    std::string secs;
    ls >> word >> secs;
    bool ok = false;
    result.seconds = parse_double(secs, ok);
    if (word != "seconds" || !ok) damaged(path, n, "expected seconds");
  }
  for (int s = begin; s < end; ++s) {
    SampleRecord r;
    std::size_t metrics = 0;
    auto ls = next("a record");
    ls >> word >> r.sample >> metrics;
    if (word != "record" || !ls || r.sample != s) damaged(path, n, "expected record " + std::to_string(s));
    if (metrics > metric_table().size()) damaged(path, n, "more metrics than the metric table");
    if (ls >> word) {  // "record S M nonfinite PASS LAYER"
      r.nonfinite.emplace();
      ls >> r.nonfinite->pass >> r.nonfinite->layer;
      if (word != "nonfinite" || !ls) damaged(path, n, "bad nonfinite field");
    }
    r.values.resize(metrics);
    for (std::size_t m = 0; m < metrics; ++m) {
      auto ms = next("a metric");
      std::size_t count = 0;
      if (!(ms >> word) || word != metric_table()[m].name || !(ms >> count))
        damaged(path, n, "expected metric " + std::string(metric_table()[m].name));
      r.values[m].resize(count);
      for (double& v : r.values[m]) {
        bool ok = false;
        if (!(ms >> word) || (v = parse_double(word, ok), !ok)) damaged(path, n, "bad value '" + word + "'");
      }
      if (ms >> word) damaged(path, n, "more values than announced");
    }
    result.records.push_back(std::move(r));
  }
  if (next("end").str() != "end") damaged(path, n, "expected end");
  return result;
}

void save_part(const fs::path& out, const UnitResult& result) {
  write_file_atomic(parts_dir(out) / result.unit.part_name(), encode_unit(result));
}

std::optional<UnitResult> load_part(const fs::path& out, const Unit& unit) {
  const fs::path path = parts_dir(out) / unit.part_name();
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return decode_unit(text.str(), unit, path.string());
}

std::vector<std::string> nonfinite_warnings(const UnitResult& result) {
  std::vector<std::string> lines;
  for (const auto& r : result.records)
    if (r.nonfinite)
      lines.push_back("normsim: warning: config " + std::to_string(result.unit.config) + " sample " +
                      std::to_string(r.sample) + ": NaN or Inf in the " + r.nonfinite->pass +
                      " pass at layer " + std::to_string(r.nonfinite->layer) +
                      "; non-finite values are left out of layers.csv and summary.csv (see nonfinite.csv)");
  return lines;
}

GridRecords gather_records(const Grid& grid, std::span<const UnitResult> results,
                           std::vector<double>* config_seconds) {
  GridRecords records(grid.configs.size());
  for (const auto& r : results) {
    const auto c = static_cast<std::size_t>(r.unit.config);
    if (c >= records.size())
      throw std::runtime_error("a unit of config " + std::to_string(c) + " is outside the grid");
    records[c].insert(records[c].end(), r.records.begin(), r.records.end());
    if (config_seconds) (*config_seconds)[c] += r.seconds;
  }
  for (std::size_t c = 0; c < records.size(); ++c) {
    auto& rs = records[c];
    std::sort(rs.begin(), rs.end(), [](const auto& a, const auto& b) { return a.sample < b.sample; });
    const int n = grid.configs[c].samples;
    for (int s = 0; s < n; ++s)
      if (s >= static_cast<int>(rs.size()) || rs[s].sample != s)
        throw std::runtime_error(
            "config " + std::to_string(c) + ": sample " + std::to_string(s) +
            (s < static_cast<int>(rs.size()) && rs[s].sample < s ? " appears twice" : " is missing"));
    if (static_cast<int>(rs.size()) != n)
      throw std::runtime_error("config " + std::to_string(c) + ": more records than samples");
  }
  return records;
}

void write_final(const fs::path& out, const Grid& grid, std::span<const UnitResult> results, RunInfo info) {
  info.config_seconds.assign(grid.configs.size(), 0.0);
  const GridRecords records = gather_records(grid, results, &info.config_seconds);
  write_nonfinite_csv(out / "nonfinite.csv", records);
  write_layers_csv(out / "layers.csv", grid, records);
  write_summary_csv(out / "summary.csv", grid, records);
  write_run_json(out / "run.json", grid, info);
}

namespace {
// prepare_out's checks; with `write`, its effects too.
int plan_out(const Grid& grid, const SweepOptions& options, bool write) {
  const fs::path& out = options.out;
  if (options.resume && options.force) throw SweepError("--resume and --force exclude each other");
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw SweepError(out.string() + " exists and is not a folder");
  const bool occupied = fs::exists(out, ec) && !fs::is_empty(out, ec);
  nlohmann::ordered_json now = grid_json(grid);
  int unit_samples = std::max(options.unit_samples, 0);
  if (occupied && options.resume) {
    std::ifstream in(grid_file(out));
    if (!in)
      throw SweepError("cannot resume in " + out.string() +
                       ": it holds no parts/grid.json (not a normsim run, or " + "one that never started)");
    nlohmann::ordered_json was;
    try {
      was = nlohmann::ordered_json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw SweepError(grid_file(out).string() + ": cannot read: " + e.what());
    }
    if (!was.is_object()) throw SweepError(grid_file(out).string() + ": not a normsim grid file");
    if (const std::string diff = grid_difference(was, now); !diff.empty())
      throw SweepError("cannot resume in " + out.string() + ": its grid differs from this one (" + diff +
                       "); use another --out, or --force to discard its results");
    const int stored = was.value("unit_samples", 0);
    if (options.unit_samples >= 0 && options.unit_samples != stored)
      throw SweepError("cannot resume in " + out.string() + ": it was run with --unit-samples " +
                       std::to_string(stored));
    if (write) {
      remove_stale_temps(out);
      remove_stale_temps(parts_dir(out));
    }
    return stored;
  }
  if (occupied && !options.force)
    throw SweepError(out.string() +
                     " is not empty; use --resume to continue the run there, --force to discard " +
                     "its results, or another --out");
  if (!write) return unit_samples;
  if (occupied) {
    for (auto name : kFinalFiles) fs::remove(out / name);
    fs::remove_all(parts_dir(out));
  }
  fs::create_directories(parts_dir(out));
  now["format"] = kGridFormat;
  now["unit_samples"] = unit_samples;
  write_file_atomic(grid_file(out), now.dump(1) + "\n");
  return unit_samples;
}
}  // namespace

int prepare_out(const Grid& grid, const SweepOptions& options) {
  return plan_out(grid, options, true);
}
void check_out(const Grid& grid, const SweepOptions& options) {
  plan_out(grid, options, false);
}

SweepReport run_sweep(const Grid& grid, Backend& backend, const SweepOptions& options, std::ostream& err) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string started = utc_now_iso8601();
  const int unit_samples = prepare_out(grid, options);
  const auto units = make_units(grid, unit_samples);

  SweepReport report;
  report.units_total = units.size();
  std::vector<UnitResult> results;
  std::vector<Unit> pending;
  std::vector<int> remaining(grid.configs.size(), 0);
  std::vector<std::string> resumed_warnings;
  for (const auto& u : units) {
    if (options.resume) {
      if (auto r = load_part(options.out, u)) {
        for (auto& w : nonfinite_warnings(*r)) resumed_warnings.push_back(std::move(w));
        results.push_back(std::move(*r));
        continue;
      }
    }
    pending.push_back(u);
    ++remaining[u.config];
  }
  report.units_resumed = results.size();

  Progress progress(units.size(), results.size(), options.progress_bar, err);
  for (const auto& w : resumed_warnings) progress.message(w);
  if (options.resume && options.verbose)
    progress.message("normsim: resuming: " + std::to_string(report.units_resumed) + " of " +
                     std::to_string(units.size()) + " units already done");
  std::vector<double> seconds(grid.configs.size(), 0.0);
  for (const auto& u : pending) {
    UnitResult r = run_unit(backend, grid, u);
    save_part(options.out, r);
    for (const auto& w : nonfinite_warnings(r)) progress.message(w);
    seconds[u.config] += r.seconds;
    results.push_back(std::move(r));
    ++report.units_run;
    progress.advance();
    if (options.verbose && --remaining[u.config] == 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3g s", seconds[u.config]);
      progress.message("normsim: config " + std::to_string(u.config) + " (" +
                       describe_config(grid, u.config) + ") done in " + buf);
    }
  }
  progress.finish();
  for (const auto& r : results)
    for (const auto& s : r.records) report.nonfinite_samples += s.nonfinite.has_value();

  RunInfo info;
  info.backend = backend.name();
  info.threads = options.threads;
  info.peak_memory_bytes = backend.peak_memory_bytes();
  info.peak_rss_bytes = peak_rss_bytes();
  info.started = started;
  info.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  write_final(options.out, grid, results, info);
  return report;
}

}  // namespace normsim::sim
