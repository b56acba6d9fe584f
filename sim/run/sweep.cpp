// The sweep engine: units, part files (the checkpoint), resume, and the final files.
#include "sim/run/sweep.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <utility>

#include "io/atomic_file.hpp"
#include "io/csv_write.hpp"
#include "sim/metrics.hpp"
#include "sim/run/config_schema.hpp"
#include "sim/run/out_lock.hpp"
#include "sim/run/progress.hpp"
#include "sim/run/staged_folder.hpp"
#include "sim/unit_plan.hpp"

namespace normsim::sim {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kGridFormat = "normsim-grid 1";
// Everything a run writes into OUT (what --force discards).
constexpr std::array<std::string_view, 9> kRunOutputs{"run.json",      "layers.csv", "summary.csv",
                                                      "nonfinite.csv", "theory.csv", "figures",
                                                      "report.html",   "report.md",  "parts"};

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

constexpr int kFinished = -1;  // plan_out: OUT holds this grid's finished run

void remove_stale_temps(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (io::is_atomic_temp(e.path())) fs::remove(e.path(), ec);
}

}  // namespace

std::string describe_config(const Grid& grid, int c) {
  std::string s;
  for (const auto& col : config_columns(grid))
    s += (s.empty() ? "" : ", ") + col + "=" + format_value(find_key(col)->get(grid.configs[c]));
  return s;
}

GridRefusal grid_refusal(const Grid& grid, const Backend& backend, int unit_samples) {
  GridRefusal r;
  std::size_t count = 0;
  for (std::size_t c = 0; c < grid.configs.size(); ++c)
    if (const std::string why = backend.refusal(grid.configs[c], unit_samples); !why.empty()) {
      r.configs += "\n  config " + std::to_string(c) + " (" + describe_config(grid, int(c)) + "): " + why;
      ++count;
    }
  if (count > 0)
    r.summary = "the " + backend.name() + " backend cannot run " + std::to_string(count) + " of " +
                std::to_string(grid.configs.size()) + " configurations";
  return r;
}

void check_backend_can_run(const Grid& grid, const Backend& backend, int unit_samples) {
  if (const GridRefusal r = grid_refusal(grid, backend, unit_samples); !r.empty())
    throw ConfigError(grid.config_file + ": " + r.summary + "; nothing was written:" + r.configs);
}

std::unique_ptr<Backend> backend_for_grid(std::unique_ptr<Backend> engine, vocab::BackendChoice requested,
                                          const Grid& grid, int unit_samples, int threads,
                                          std::string* note) {
  if (requested != vocab::BackendChoice::auto_ || engine->name() == "cpu") return engine;
  const GridRefusal r = grid_refusal(grid, *engine, unit_samples);
  if (r.empty()) return engine;
  if (note) *note = r.summary + r.configs;
  return make_backend(vocab::BackendChoice::cpu, threads);
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
  const std::size_t per_sample = std::size_t(grid.configs[unit.config].steps) + 1;
  if (r.records.size() != samples.size() * per_sample)
    throw std::runtime_error(who + ": returned " + std::to_string(r.records.size()) + " records for " +
                             std::to_string(samples.size()) + " samples of " + std::to_string(per_sample) +
                             " steps each");
  for (std::size_t i = 0; i < r.records.size(); ++i) {
    const SampleRecord& rec = r.records[i];
    const int sample = samples[i / per_sample], step = int(i % per_sample);
    if (rec.sample != sample || rec.step != step)
      throw std::runtime_error(who + ": record " + std::to_string(i) + " is sample " +
                               std::to_string(rec.sample) + " step " + std::to_string(rec.step) +
                               ", expected sample " + std::to_string(sample) + " step " +
                               std::to_string(step));
    if (rec.values.size() > metric_table().size())
      throw std::runtime_error(who + ": a record holds more metrics than the metric table");
  }
  return r;
}

std::vector<std::string> nonfinite_warnings(const UnitResult& result) {
  std::vector<std::string> lines;
  for (const auto& r : result.records) {
    const std::string who = std::string(kRunPrefix) + "warning: config " +
                            std::to_string(result.unit.config) + " sample " + std::to_string(r.sample) +
                            (r.step > 0 ? " step " + std::to_string(r.step) : "");
    if (r.nonfinite)
      lines.push_back(who + ": NaN or Inf in the " + r.nonfinite->pass + " pass at layer " +
                      std::to_string(r.nonfinite->layer) +
                      "; non-finite values are left out of layers.csv and summary.csv (see nonfinite.csv)");
    if (const auto& f = r.nonfinite_statistics; !f.empty())
      lines.push_back(
          who + ": " + std::to_string(f.size()) + " statistic(s) came out NaN or Inf from a finite " +
          "stream, first " + std::string(metric_table()[f[0].metric].name) + " at layer " +
          std::to_string(f[0].layer) + "; left out of layers.csv and summary.csv (see nonfinite.csv)");
  }
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
    std::sort(rs.begin(), rs.end(), [](const auto& a, const auto& b) {
      return std::pair(a.sample, a.step) < std::pair(b.sample, b.step);
    });
    const int n = grid.configs[c].samples, per_sample = grid.configs[c].steps + 1;
    for (int i = 0; i < n * per_sample; ++i) {
      const int s = i / per_sample, step = i % per_sample;
      const bool here = i < static_cast<int>(rs.size());
      if (!here || rs[i].sample != s || rs[i].step != step)
        throw std::runtime_error("config " + std::to_string(c) + ": sample " + std::to_string(s) +
                                 (per_sample > 1 ? " step " + std::to_string(step) : "") +
                                 (here && std::pair(rs[i].sample, rs[i].step) < std::pair(s, step)
                                      ? " appears twice"
                                      : " is missing"));
    }
    if (static_cast<int>(rs.size()) != n * per_sample)
      throw std::runtime_error("config " + std::to_string(c) + ": more records than samples");
  }
  return records;
}

void write_final(const fs::path& out, const Grid& grid, std::span<const UnitResult> results, RunInfo info,
                 const ExtraFiles& extra) {
  info.config_seconds.assign(grid.configs.size(), 0.0);
  const GridRecords records = gather_records(grid, results, &info.config_seconds);
  // All four or none (a full disk leaves OUT as it was, its parts/ ready for --resume); run.json, the mark
  // of a finished run, moves last.
  StagedFolder staged(out);
  write_nonfinite_csv(staged.path() / "nonfinite.csv", grid, records);
  write_layers_csv(staged.path() / "layers.csv", grid, records);
  write_summary_csv(staged.path() / "summary.csv", grid, records);
  if (extra) extra(staged.path());
  write_run_json(staged.path() / "run.json", grid, info);
  staged.commit({"run.json"});
  // The checkpoint has served: a finished run is its result files (issue 30 item 7), and --resume on it finds
  // run.json instead (check_resume). A part that cannot be removed is left, never an error.
  std::error_code ec;
  fs::remove_all(parts_dir(out), ec);
}

bool holds_results(const fs::path& dir, bool top) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const fs::path name = e.path().filename();
    if (name == kLockFileName || io::is_atomic_temp(e.path())) continue;
    if (top && name == "parts" && e.is_directory(ec) && !holds_results(e.path(), false)) continue;
    return true;
  }
  return false;
}

namespace {

// The unit size stored by the run in OUT, after checking that its grid is this one.
// Whether OUT holds a finished run of this grid (run.json, its checkpoint removed): nothing to resume.
bool finished_run(const fs::path& out, const nlohmann::ordered_json& now) {
  std::error_code ec;
  if (fs::exists(grid_file(out), ec) || !fs::exists(out / "run.json", ec)) return false;
  std::ifstream in(out / "run.json");
  nlohmann::ordered_json run;
  try {
    run = nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw SweepError((out / "run.json").string() + ": cannot read: " + e.what());
  }
  if (const std::string diff = grid_difference(run, now); !diff.empty())
    throw SweepError("cannot resume in " + out.string() + ": it holds a finished run of another grid (" +
                     diff + "); use another --out, or --force to discard its results");
  return true;
}

int check_resume(const fs::path& out, const nlohmann::ordered_json& now, const SweepOptions& options) {
  std::ifstream in(grid_file(out));
  if (!in)
    throw SweepError("cannot resume in " + out.string() +
                     ": it holds no parts/grid.json (not a normsim run, or one that never started)");
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
  const std::string backend = was.value("backend", "");
  if (!backend.empty() && !options.backend.empty() && backend != options.backend)
    throw SweepError("cannot resume in " + out.string() + ": it was run on the " + backend +
                     " backend, this run is on the " + options.backend + " backend (--backend " + backend +
                     " to resume it, --force to discard its results)");
  return stored;
}

// Removes every file a run writes (--force): results, figures, reports and the checkpoint.
void discard_results(const fs::path& out) {
  for (auto name : kRunOutputs) fs::remove_all(out / name);
}

// A fresh checkpoint: OUT/parts/grid.json. On failure (a full disk) nothing of it is left behind.
void start_checkpoint(const fs::path& out, nlohmann::ordered_json grid, int unit_samples,
                      const std::string& backend) {
  grid["format"] = kGridFormat;
  grid["unit_samples"] = unit_samples;
  if (!backend.empty()) grid["backend"] = backend;
  fs::create_directories(parts_dir(out));
  try {
    io::write_file_atomic(grid_file(out), grid.dump(1) + "\n");
  } catch (...) {
    std::error_code ec;
    fs::remove_all(parts_dir(out), ec);
    throw;
  }
}

// prepare_out's checks; with `write`, its effects too. -1: OUT holds this grid's finished run (--resume).
int plan_out(const Grid& grid, const SweepOptions& options, bool write) {
  const fs::path& out = options.out;
  if (options.resume && options.force) throw SweepError("--resume and --force exclude each other");
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_directory(out, ec))
    throw SweepError(out.string() + " exists and is not a folder");
  const bool full = fs::exists(out, ec) && holds_results(out);
  const nlohmann::ordered_json now = grid_json(grid);
  if (options.resume && full) {
    if (finished_run(out, now)) return kFinished;
    const int stored = check_resume(out, now, options);
    if (write) {
      remove_stale_temps(out);
      remove_stale_temps(parts_dir(out));
    }
    return stored;
  }
  if (full && !options.force)
    throw SweepError(out.string() +
                     " is not empty; use --resume to continue the run there, --force to discard " +
                     "its results, or another --out");
  const int unit_samples = std::max(options.unit_samples, 0);
  if (!write) return unit_samples;
  if (full) discard_results(out);
  start_checkpoint(out, now, unit_samples, options.backend);
  return unit_samples;
}
}  // namespace

int prepare_out(const Grid& grid, const SweepOptions& options) {
  return plan_out(grid, options, true);
}
void check_out(const Grid& grid, const SweepOptions& options) {
  plan_out(grid, options, false);
}

PreparedOut lock_and_prepare_out(const Grid& grid, const SweepOptions& options) {
  check_out(grid, options);
  std::error_code ec;
  const bool created = !fs::exists(options.out, ec);
  fs::create_directories(options.out);
  PreparedOut p;
  try {
    p.lock = std::make_unique<OutLock>(options.out);
    p.unit_samples = prepare_out(grid, options);
    p.finished = p.unit_samples == kFinished;
    if (p.finished) p.unit_samples = std::max(options.unit_samples, 0);
  } catch (...) {
    p.lock.reset();
    if (created) fs::remove_all(options.out, ec);  // a refused run leaves OUT as it was: absent
    throw;
  }
  return p;
}

SweepReport run_sweep(const Grid& grid, Backend& backend, const SweepOptions& options, std::ostream& err) {
  SweepOptions with_backend = options;
  if (with_backend.backend.empty()) with_backend.backend = backend.name();
  const PreparedOut prepared = lock_and_prepare_out(grid, with_backend);
  return run_prepared(grid, backend, with_backend, prepared, err);
}

SweepReport run_prepared(const Grid& grid, Backend& backend, const SweepOptions& options,
                         const PreparedOut& prepared, std::ostream& err) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string started = utc_now_iso8601();
  const auto units = make_units(grid, prepared.unit_samples);
  const GridId id = grid_id(grid);

  SweepReport report;
  report.units_total = units.size();
  if (prepared.finished) {  // --resume on a finished run: its files stand, nothing runs or is rewritten
    report.units_resumed = units.size();
    err << kRunPrefix << options.out.string()
        << " holds this grid's finished run (run.json): nothing to resume\n";
    return report;
  }
  std::vector<UnitResult> results;
  std::vector<Unit> pending;
  std::vector<int> remaining(grid.configs.size(), 0);
  std::vector<std::string> resumed_warnings;
  for (const auto& u : units) {
    if (options.resume) {
      if (auto r = load_part(options.out, u, id)) {
        for (auto& w : nonfinite_warnings(*r)) resumed_warnings.push_back(std::move(w));
        results.push_back(std::move(*r));
        continue;
      }
    }
    pending.push_back(u);
    ++remaining[u.config];
  }
  report.units_resumed = results.size();

  // The bar weighs units by cost; the resumed ones are counted first (which ones does not matter to it).
  const auto cost = [&](const Unit& u) { return sample_cost(grid.configs[u.config]) * (u.end - u.begin); };
  std::vector<double> unit_costs;
  for (const auto& r : results) unit_costs.push_back(cost(r.unit));
  for (const auto& u : pending) unit_costs.push_back(cost(u));
  Progress progress(std::move(unit_costs), results.size(), options.progress_bar, err);
  for (const auto& w : resumed_warnings) progress.message(w);
  if (options.resume && options.verbose)
    progress.message(std::string(kRunPrefix) + "resuming: " + std::to_string(report.units_resumed) + " of " +
                     std::to_string(units.size()) + " units already done");
  std::vector<double> seconds(grid.configs.size(), 0.0);
  for (const auto& u : pending) {
    UnitResult r = run_unit(backend, grid, u);
    save_part(options.out, r, id);
    for (const auto& w : nonfinite_warnings(r)) progress.message(w);
    seconds[u.config] += r.seconds;
    results.push_back(std::move(r));
    ++report.units_run;
    progress.advance(cost(u));
    if (options.verbose && --remaining[u.config] == 0) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3g s", seconds[u.config]);
      progress.message(std::string(kRunPrefix) + "config " + std::to_string(u.config) + " (" +
                       describe_config(grid, u.config) + ") done in " + buf);
    }
  }
  progress.finish();
  for (const auto& r : results)
    for (const auto& s : r.records)
      report.nonfinite_samples += s.nonfinite || !s.nonfinite_statistics.empty();

  RunInfo info;
  info.backend = backend.name();
  info.device = backend.device();
  info.threads = options.threads;
  info.peak_memory_bytes = backend.peak_memory_bytes();
  info.peak_rss_bytes = peak_rss_bytes();
  info.started = started;
  info.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  write_final(options.out, grid, results, info, options.extra_files);
  return report;
}

}  // namespace normsim::sim
