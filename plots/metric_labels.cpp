// Metric and axis symbols (see metric_labels.hpp): a metric's own are its row of vocab/metrics.def.
#include "metric_labels.hpp"

#include "vocab/metrics.hpp"

namespace normsim::plots {

namespace {

// The table's row of a metric, or nullptr for a name it does not hold (the PyTorch bridge's
// gradw_<parameter>).
const vocab::MetricInfo* row_of(const std::string& metric) {
  const int id = vocab::metric_id(metric);
  return id < 0 ? nullptr : &vocab::metric_table()[std::size_t(id)];
}

// A weight-gradient norm gradw_<w> that the table does not hold: the PyTorch bridge names one per parameter;
// it reads as the table's gradw_ rows (sublayer, log axis; tests/check/test_metric_readers.cpp).
bool is_bridge_gradw(const std::string& metric) {
  return metric.rfind("gradw_", 0) == 0;
}

}  // namespace

bool is_sublayer_metric(const std::string& metric) {
  if (const auto* row = row_of(metric)) return row->index == vocab::MetricIndex::sublayer;
  return is_bridge_gradw(metric);
}

Text metric_label(const std::string& metric) {
  const auto* row = row_of(metric);
  if (row && !row->symbol.empty()) return {std::string(row->symbol), std::string(row->symbol_latex)};
  if (!row && is_bridge_gradw(metric)) {
    const std::string w = metric.substr(6);
    return {"‖∂{/:Italic L}/∂{/:Italic W}_{" + escape_enhanced(w) + "}‖_F",
            "$\\|\\partial\\mathcal{L}/\\partial W_\\mathrm{" + escape_latex(w) + "}\\|_F$"};
  }
  return plain_text(metric);
}

bool metric_log_scale(const std::string& metric) {
  if (const auto* row = row_of(metric)) return row->log_scale;
  return is_bridge_gradw(metric);
}

Text layer_axis_label(const std::string& metric) {
  if (is_sublayer_metric(metric)) return {"sublayer {/:Italic k}", "sublayer $k$"};
  return {"layer {/:Italic l}", "layer $\\ell$"};
}

Text depth_axis_label() {
  return {"depth {/:Italic K} (sublayers)", "depth $K$ (sublayers)"};
}

Text normalized_layer_axis_label(const std::string& metric) {
  if (is_sublayer_metric(metric))
    return {"relative depth ({/:Italic k}+½)/{/:Italic K}", "relative depth $(k+\\frac12)/K$"};
  return {"relative depth {/:Italic l}/{/:Italic K}", "relative depth $\\ell/K$"};
}

}  // namespace normsim::plots
