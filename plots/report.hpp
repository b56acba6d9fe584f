// The report of a results folder: OUT/report.md (figures linked) and a self-contained OUT/report.html
// (figures embedded), each with the run's settings from run.json and, after `normsim check`, the verdicts.
#pragma once

#include <vector>

#include "render_figures.hpp"
#include "results_folder.hpp"

namespace normsim::plots {

// Writes both files atomically (report.md only when `markdown`). The HTML embeds each figure's PNG
// (base64) when drawn, else its SVG.
void write_report(const ResultsFolder& folder, const std::vector<RenderedFigure>& figures,
                  bool markdown = true);

}  // namespace normsim::plots
