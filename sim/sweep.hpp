// The sweep: a Grid run through a Backend as units of work (one config, a contiguous range of samples),
// each finished unit saved atomically under OUT/parts/ so an interrupted run loses nothing finished, and
// the result files written once at the end from every unit's records.
//
// One process runs everything through run_sweep(). A distributed driver (MPI) uses the pieces instead:
// every rank calls make_units() on the same Grid, runs its share with run_unit() (+ save_part()), the
// records are gathered to one rank, and that rank calls write_final().
#pragma once
#include <filesystem>
#include <optional>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/backend.hpp"
#include "sim/config_file.hpp"
#include "sim/record.hpp"
#include "sim/results.hpp"

namespace normsim::sim {

// Samples [begin, end) of config `config`.
struct Unit {
  int config = 0;
  int begin = 0, end = 0;
  // "cfg-000003.s0-3.part" (samples 0 to 3 inclusive): the unit's file under OUT/parts/.
  std::string part_name() const;
  friend bool operator==(const Unit&, const Unit&) = default;
};

// The units of a grid, in config order: each config's samples in pieces of `unit_samples`
// (0: one unit per config). Deterministic in (grid, unit_samples).
std::vector<Unit> make_units(const Grid& grid, int unit_samples);

// What a unit produced: one record per sample, in sample order, and the backend's time for it.
struct UnitResult {
  Unit unit;
  std::vector<SampleRecord> records;
  double seconds = 0;
};

// Runs one unit. Throws std::runtime_error when the backend returns records that do not fit the unit.
UnitResult run_unit(Backend& backend, const Grid& grid, const Unit& unit);

// A unit's records as text and back, exactly (every double round-trips, NaN included): the format of the
// part files, and what a distributed driver can send between processes. decode_unit throws
// std::runtime_error naming `source` and the line when the text is damaged or belongs to another unit.
std::string encode_unit(const UnitResult& result);
UnitResult decode_unit(const std::string& text, const Unit& unit, const std::string& source);

// OUT/parts/<unit.part_name()>, written atomically (encode_unit's text).
void save_part(const std::filesystem::path& out, const UnitResult& result);
// The saved result of `unit`, or nullopt when it has no part file. Throws std::runtime_error when the file
// is damaged or does not belong to this unit.
std::optional<UnitResult> load_part(const std::filesystem::path& out, const Unit& unit);

// One warning line per sample of `result` where a NaN or Inf appeared ("" entries never returned).
std::vector<std::string> nonfinite_warnings(const UnitResult& result);

// Every sample's record of every config, from units that cover each sample exactly once (in any order);
// adds each unit's seconds to config_seconds[config] when given. Throws std::runtime_error on a missing or
// repeated sample.
GridRecords gather_records(const Grid& grid, std::span<const UnitResult> results,
                           std::vector<double>* config_seconds = nullptr);

// Writes OUT/nonfinite.csv, layers.csv, summary.csv and finally run.json (its presence marks a finished
// run), each atomically. `results` must cover every sample of every config exactly once, in any order.
// info.config_seconds is filled from the results.
void write_final(const std::filesystem::path& out, const Grid& grid, std::span<const UnitResult> results,
                 RunInfo info);

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
};

struct SweepReport {
  std::size_t units_total = 0, units_run = 0, units_resumed = 0;
  std::size_t nonfinite_samples = 0;
};

// Checks and prepares OUT (creates it, OUT/parts and OUT/parts/grid.json). Throws SweepError when OUT
// holds anything and neither resume nor force is set, or when resume finds a different grid. Returns the
// unit size to use. Writes nothing when it throws.
int prepare_out(const Grid& grid, const SweepOptions& options);
// The checks of prepare_out alone, writing nothing (the CLI calls it before starting a backend).
void check_out(const Grid& grid, const SweepOptions& options);

// The whole sweep in this process: prepare_out, every unfinished unit (saved as it finishes), write_final.
// Warnings and progress go to `err`.
SweepReport run_sweep(const Grid& grid, Backend& backend, const SweepOptions& options, std::ostream& err);

}  // namespace normsim::sim
