// Gradient-norm profiles: side by side, the stream gradient E[(dL/dx_l)^2] and the weight-gradient norms
// ||dL/dW2||_F and ||dL/dW1||_F per layer, one line per placement. The figure of B2T (Takase et al. 2023),
// Mix-LN (Li et al. 2024) and the Curse of Depth (Sun et al. 2025): where gradients vanish or explode.
#pragma once

#include <string>
#include <vector>

#include "figure.hpp"
#include "results_folder.hpp"

namespace normsim::plots {

// Figures named gradients[_<key>-<value>...] from those of grad_sq, gradw_w2, gradw_w1 that are both in the
// folder and in `metrics`; none when there are none.
std::vector<Figure> gradient_figures(const ResultsFolder& folder, const std::vector<std::string>& metrics);

}  // namespace normsim::plots
