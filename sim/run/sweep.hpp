// The sweep: a Grid run through a Backend as units of work (one config, a contiguous range of samples),
// each finished unit saved atomically under OUT/parts/ so an interrupted run loses nothing finished, and
// the result files written once at the end from every unit's records.
//
// One process runs everything through run_sweep(). A distributed driver (MPI) uses the pieces instead:
// every rank calls make_units() on the same Grid, runs its share with run_unit() (+ save_part()), the
// records are gathered to one rank, and that rank calls write_final().
#pragma once
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/backend.hpp"
#include "sim/record.hpp"
#include "sim/run/config_file.hpp"
#include "sim/run/out_lock.hpp"
#include "sim/run/part_file.hpp"
#include "sim/run/results.hpp"

namespace normsim::sim {

// Every line `normsim run` writes to stderr starts with this, as every command's lines start with
// "normsim COMMAND: " (cli/command_line.hpp): progress, warnings and the closing summary.
inline constexpr const char* kRunPrefix = "normsim run: ";

// "placement=post, depth=8": the identifying columns of config c.
std::string describe_config(const Grid& grid, int c);

// Throws ConfigError listing every configuration `backend` refuses (Backend::refusal), each with the file
// and its keys: called before OUT is touched.
void check_backend_can_run(const Grid& grid, const Backend& backend, int unit_samples);
// Why `backend` cannot run some configurations of `grid`: a summary line and one line per configuration;
// both empty when it can run them all.
struct GridRefusal {
  std::string summary, configs;
  bool empty() const { return summary.empty(); }
};
GridRefusal grid_refusal(const Grid& grid, const Backend& backend, int unit_samples);
// --backend auto: the chosen engine when it can run every configuration of the grid, else the CPU backend,
// with *note set to why (a CUDA backend that lacks a feature a config asks for: update, Jacobian metrics).
// Any other request (cpu, cuda, reference) returns the engine unchanged: an explicit choice is not
// overridden.
std::unique_ptr<Backend> backend_for_grid(std::unique_ptr<Backend> engine, vocab::BackendChoice requested,
                                          const Grid& grid, int unit_samples, int threads, std::string* note);

// The units of a grid, in config order: each config's samples in pieces of `unit_samples`
// (0: one unit per config). Deterministic in (grid, unit_samples).
std::vector<Unit> make_units(const Grid& grid, int unit_samples);

// Runs one unit. Throws std::runtime_error when the backend returns records that do not fit the unit.
UnitResult run_unit(Backend& backend, const Grid& grid, const Unit& unit);

// One warning line per sample of `result` where a NaN or Inf appeared ("" entries never returned).
std::vector<std::string> nonfinite_warnings(const UnitResult& result);

// Every sample's record of every config, from units that cover each sample exactly once (in any order);
// adds each unit's seconds to config_seconds[config] when given. Throws std::runtime_error on a missing or
// repeated sample.
GridRecords gather_records(const Grid& grid, std::span<const UnitResult> results,
                           std::vector<double>* config_seconds = nullptr);

// Files a caller adds to a run's results (the CLI's theory.csv): written into the staging folder given, so
// they land with the others, all or none.
using ExtraFiles = std::function<void(const std::filesystem::path& stage)>;

// Writes OUT/nonfinite.csv, layers.csv, summary.csv, `extra`'s files and finally run.json (its presence marks
// a finished run), all or none (sim/run/staged_folder.hpp). `results` must cover every sample of every config
// exactly once, in any order. info.config_seconds is filled from the results.
void write_final(const std::filesystem::path& out, const Grid& grid, std::span<const UnitResult> results,
                 RunInfo info, const ExtraFiles& extra = {});

// A sweep that cannot start as asked (OUT not empty, --resume on a different grid): a usage error.
class SweepError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SweepOptions {
  std::filesystem::path out;
  bool resume = false;        // skip units whose part files exist (the stored grid must match)
  bool force = false;         // remove earlier results (result files and parts/) and start over
  int unit_samples = -1;      // samples per unit; 0: whole configs; -1: 0, or the stored value on resume
  bool progress_bar = false;  // draw the bar (the CLI: stderr is a terminal and not --quiet)
  bool verbose = false;       // one line per finished config
  int threads = 0;            // recorded in run.json
  // The backend's name, recorded in the checkpoint: a resume must run on the same backend (another's
  // numbers differ within rounding, so the files would mix two). Empty: neither recorded nor checked.
  std::string backend;
  ExtraFiles extra_files;  // more result files, written with the others (write_final)
};

struct SweepReport {
  std::size_t units_total = 0, units_run = 0, units_resumed = 0;
  std::size_t nonfinite_samples = 0;
};

// Whether `dir` holds anything but a lock file, stale temporaries and (top level) a parts/ folder that holds
// nothing else either (what a run killed before its checkpoint existed leaves behind): the test by which
// `run` and `check` refuse a folder that is not empty.
bool holds_results(const std::filesystem::path& dir, bool top = true);

// Checks and prepares OUT (creates it, OUT/parts and OUT/parts/grid.json). Throws SweepError when OUT
// holds anything and neither resume nor force is set, or when resume finds a different grid, unit size or
// backend (options.backend, where both the checkpoint and the options name one). Returns the
// unit size to use, or -1 when resume finds this grid's finished run (run.json; write_final removes the
// checkpoint, OUT/parts, once the result files are in place). Writes nothing when it throws.
int prepare_out(const Grid& grid, const SweepOptions& options);
// The checks of prepare_out alone, writing nothing (the CLI calls it before starting a backend).
void check_out(const Grid& grid, const SweepOptions& options);

// OUT checked, locked (sim/run/out_lock.hpp) and prepared, for as long as this object lives.
struct PreparedOut {
  std::unique_ptr<OutLock> lock;
  int unit_samples = 0;
  bool finished = false;  // --resume found this grid's finished run (run.json): nothing to run or write
};
// check_out, then OUT created if absent, locked, and prepare_out. When anything fails, OUT is left as it
// was (a folder this call created is removed) and the error is rethrown.
PreparedOut lock_and_prepare_out(const Grid& grid, const SweepOptions& options);

// The whole sweep in this process: prepare_out, every unfinished unit (saved as it finishes), write_final.
// Warnings and progress go to `err`.
SweepReport run_sweep(const Grid& grid, Backend& backend, const SweepOptions& options, std::ostream& err);
// The same in an OUT the caller has prepared and keeps locked (to write more files under the same lock).
SweepReport run_prepared(const Grid& grid, Backend& backend, const SweepOptions& options,
                         const PreparedOut& prepared, std::ostream& err);

}  // namespace normsim::sim
