// Depth scaling: a per-layer metric at the last layer (or at layer 0) against the depth K on log-log axes,
// one line per placement with a least-squares power law whose exponent +- 95% CI is in the legend. Drawn only
// when depth is swept. Xiong et al. (2020, Fig. 3 and Thm. 1): the last layer's gradw_w2 under Pre-LN
// shrinks like K^(-1/2) while Post-LN's stays flat.
#pragma once

#include <string>
#include <vector>

#include "figure.hpp"
#include "results_folder.hpp"

namespace normsim::plots {

enum class DepthLayer { last, first };

// Figures named depth_<metric>_last[_<key>-<value>...] (or _first); none when depth does not vary.
std::vector<Figure> depth_figures(const ResultsFolder& folder, const std::vector<std::string>& metrics,
                                  DepthLayer at);

}  // namespace normsim::plots
