// The symbols figures use for metrics and axes (docs/conventions.md, "Metrics"), so every figure names a
// quantity the same way in enhanced text and in LaTeX. A metric's symbol, index and axis are its row of the
// metric table (vocab/metrics.def); the PyTorch bridge's own gradw_<parameter> read as the table's gradw_.
#pragma once

#include <string>

#include "text.hpp"

namespace normsim::plots {

// Axis label of a metric, e.g. E[x_l^2] for act_sq; a metric without a symbol is labelled with its name.
Text metric_label(const std::string& metric);

// True for metrics indexed by sublayer k = 0..K-1 (cos_next, branch_sq, rel_update, gradw_*,
// block_identity_dev); the others are indexed by stream l = 0..K.
bool is_sublayer_metric(const std::string& metric);

// "layer l" or "sublayer k", matching the metric's index.
Text layer_axis_label(const std::string& metric);

// The one rule for value axes (docs/figures.md, "Log or linear"): decided by the metric, never by the data
// of a panel or a depth, so a metric reads the same in every figure: its row's axis. Magnitudes (second
// moments, mean and max |x|, branch outputs, relative updates, gradients) are drawn on log axes; cosines, the
// effective rank, the Jacobian metrics and metrics the table does not know on linear ones.
bool metric_log_scale(const std::string& metric);

Text depth_axis_label();                                      // depth K (sublayers)
Text normalized_layer_axis_label(const std::string& metric);  // l/K or k/K

}  // namespace normsim::plots
