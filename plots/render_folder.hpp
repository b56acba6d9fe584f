// The plots library's entry point: every figure and the report of one results folder. `normsim plot`,
// `normsim run` and `normsim check` all end here.
#pragma once

#include <filesystem>

#include "plot_error.hpp"
#include "plot_options.hpp"

namespace normsim::plots {

// Reads OUT (run.json, summary.csv, optional theory.csv, verdicts.json, claims/), draws every figure under
// OUT/figures and writes OUT/report.md and OUT/report.html (unless options.report is off). With
// options.claims_only only the claim figures are drawn, and a folder without verdicts.json is an input error.
// Throws a PlotError saying what is wrong and how to fix it: input kind for a folder or option that cannot be
// used (nothing is written then), environment kind for gnuplot missing or failing. Each file appears whole or
// not at all.
void render_folder(const std::filesystem::path& out, const PlotOptions& options);

}  // namespace normsim::plots
