// One figure per claim of verdicts.json (written by `normsim check`): the measured values with their standard
// errors against x, and the prediction dashed, from claims/<id>/data.csv.
#pragma once

#include <vector>

#include "figure.hpp"
#include "results_folder.hpp"

namespace normsim::plots {

// Figures named claim_<id>. figure_kind "profile" draws a band (dense x), "points" unjoined error bars, any
// other kind ("scaling", "line", ...) joined error bars.
std::vector<Figure> claim_figures(const ResultsFolder& folder);

}  // namespace normsim::plots
