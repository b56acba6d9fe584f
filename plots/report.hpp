// The report of a results folder: OUT/report.md and OUT/report.html (both link the figures), each with the
// run's settings from run.json and, after `normsim check`, the verdicts with their tally.
#pragma once

#include <vector>

#include "render_figures.hpp"
#include "results_folder.hpp"

namespace normsim::plots {

// Writes both files atomically (report.md only when `markdown`).
void write_report(const ResultsFolder& folder, const std::vector<RenderedFigure>& figures,
                  bool markdown = true);

}  // namespace normsim::plots
