// OUT/report.md: the report in Markdown, figures linked from OUT/figures (renders on GitHub and in editors).
#pragma once

#include <string>
#include <vector>

#include "render_figures.hpp"
#include "results_folder.hpp"

namespace normsim::plots {

std::string markdown_report(const ResultsFolder& folder, const std::vector<RenderedFigure>& figures);

}  // namespace normsim::plots
