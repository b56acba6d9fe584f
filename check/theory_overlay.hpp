// The mean-field prediction of every configuration of a run, written beside its results as OUT/theory.csv
// (config,layer,metric,value) so that `normsim plot` overlays theory on the measured profiles. Metrics
// without a controlled prediction (theory_notes.md) are left out, never guessed.
#pragma once
#include <filesystem>

#include "sim/config_file.hpp"

namespace normsim::check {

// Returns the number of rows written; writes atomically. A configuration the theory cannot describe is
// skipped (its reason goes to the returned list).
std::size_t write_theory_csv(const std::filesystem::path& out, const sim::Grid& grid,
                             std::vector<std::string>* skipped = nullptr);

}  // namespace normsim::check
