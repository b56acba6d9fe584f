// OUT/report.html: the report as a page that links its figures (figures/NAME.png as thumbnails, each opening
// the full PNG, with links to its PDF, SVG, CSV and script) rather than embedding them, so it stays small
// however many figures a sweep draws. A table of contents, the verdicts coloured with their tally, the run's
// settings, then one thumbnail grid per figure kind.
#pragma once

#include <string>
#include <vector>

#include "render_figures.hpp"
#include "results_folder.hpp"

namespace normsim::plots {

std::string html_report(const ResultsFolder& folder, const std::vector<RenderedFigure>& figures);

}  // namespace normsim::plots
