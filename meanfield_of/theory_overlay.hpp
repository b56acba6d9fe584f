// The mean-field prediction of every configuration of a run, written beside its results as OUT/theory.csv
// (the columns of summary.csv up to the index, then value: sim/run/result_rows.hpp) so that `normsim plot`
// overlays theory on the measured profiles. Metrics without a controlled prediction (theory_notes.md) are
// left out, never guessed.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "sim/run/config_file.hpp"
#include "sim/run/result_rows.hpp"

namespace normsim::meanfield_of {

// One value of theory.csv: config, metric (position in sim::metric_table()), its l or k index, the value.
struct TheoryValue {
  std::size_t config = 0, metric = 0, index = 0;
  double value = 0;
};

// Every finite mean-field value of every configuration, in file order (config, metric, index). A
// configuration the theory cannot describe is skipped (its reason goes to `skipped`); an entry the mean
// field tried to predict but got NaN or Inf for (an overflow) is left out and goes to `nonfinite` (value 0).
std::vector<TheoryValue> theory_values(const sim::Grid& grid, std::vector<std::string>* skipped = nullptr,
                                       std::vector<TheoryValue>* nonfinite = nullptr);

// The pass name of the mean field's rows in nonfinite.csv; their sample is -1 (the mean field has none).
inline constexpr std::string_view kMeanFieldPass = "meanfield";

// nonfinite.csv's meanfield rows: theory_values' `nonfinite` entries, in file order (config, metric, index).
std::vector<sim::NonFiniteRow> theory_nonfinite(const sim::Grid& grid);

// Writes OUT/theory.csv atomically, and lists the mean field's NaN or Inf entries in OUT/nonfinite.csv
// (pass "meanfield", sample -1, after the simulator's rows; earlier meanfield rows are replaced, so a rerun
// does not repeat them); returns the number of theory.csv rows written.
std::size_t write_theory_csv(const std::filesystem::path& out, const sim::Grid& grid,
                             std::vector<std::string>* skipped = nullptr);

}  // namespace normsim::meanfield_of
