// Per-layer profiles: a metric's mean +- s.e. over samples against the layer, one line per placement (or per
// value of the one other varying key), one figure per combination of the remaining keys, theory dashed.
#pragma once

#include <string>
#include <vector>

#include "figure.hpp"
#include "results_folder.hpp"

namespace normsim::plots {

// Figures named profile_<metric>[_<key>-<value>...].
std::vector<Figure> profile_figures(const ResultsFolder& folder, const std::vector<std::string>& metrics);

}  // namespace normsim::plots
