// OUT/report.html: the report as one self-contained HTML file (figures embedded, no external references),
// to mail or archive beside a paper draft.
#pragma once

#include <string>
#include <vector>

#include "render_figures.hpp"
#include "results_folder.hpp"

namespace normsim::plots {

// Reads the drawn figures from folder.dir / "figures" to embed them.
std::string html_report(const ResultsFolder& folder, const std::vector<RenderedFigure>& figures);

// Standard base64 (RFC 4648), for data: URLs.
std::string base64(const std::string& bytes);

}  // namespace normsim::plots
