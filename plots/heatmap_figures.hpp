// Layer x depth heatmaps: a metric over (layer, depth) for one placement, the layer divided by the depth so
// profiles of every depth line up (or the raw layer). Drawn only when depth is swept.
#pragma once

#include <string>
#include <vector>

#include "figure.hpp"
#include "plot_options.hpp"
#include "results_folder.hpp"

namespace normsim::plots {

// Figures named heatmap_<metric>[_<key>-<value>...], placement among the keys when it varies.
std::vector<Figure> heatmap_figures(const ResultsFolder& folder, const std::vector<std::string>& metrics,
                                    HeatmapLayer x_axis);

}  // namespace normsim::plots
