// Metric and axis symbols (see metric_labels.hpp). Enhanced text sets variables in italics as in the papers.
#include "metric_labels.hpp"

#include <map>

namespace normsim::plots {

namespace {

// The matrix of a weight-gradient metric gradw_<w>, as a subscripted W.
Text weight_symbol(const std::string& w) {
  static const std::map<std::string, Text> known = {
      {"w1", {"{/:Italic W}_1", "W_1"}},
      {"w2", {"{/:Italic W}_2", "W_2"}},
      {"wgate", {"{/:Italic W}_{gate}", "W_\\mathrm{gate}"}},
      {"wq", {"{/:Italic W}_Q", "W_Q"}},
      {"wk", {"{/:Italic W}_K", "W_K"}},
      {"wv", {"{/:Italic W}_V", "W_V"}},
      {"wo", {"{/:Italic W}_O", "W_O"}},
  };
  const auto it = known.find(w);
  if (it != known.end()) return it->second;
  return {"{/:Italic W}_{" + escape_enhanced(w) + "}", "W_\\mathrm{" + escape_latex(w) + "}"};
}

}  // namespace

bool is_sublayer_metric(const std::string& metric) {
  return metric == "cos_next" || metric == "branch_sq" || metric == "rel_update" ||
         metric.rfind("gradw_", 0) == 0;
}

Text metric_label(const std::string& metric) {
  static const std::map<std::string, Text> known = {
      {"act_sq", {"E[{/:Italic x}_{/:Italic l}^2]", "$\\mathrm{E}[x_\\ell^2]$"}},
      {"grad_sq",
       {"E[(∂{/:Italic L}/∂{/:Italic x}_{/:Italic l})^2]",
        "$\\mathrm{E}[(\\partial\\mathcal{L}/\\partial x_\\ell)^2]$"}},
      {"cos_next",
       {"cos({/:Italic x}_{/:Italic k}, {/:Italic x}_{{/:Italic k}+1})", "$\\cos(x_k, x_{k+1})$"}},
      {"token_cos",
       {"cos({/:Italic x}_{/:Italic l}[{/:Italic t}], {/:Italic x}_{/:Italic l}[{/:Italic s}])",
        "$\\cos(x_\\ell[t], x_\\ell[s])$"}},
      {"act_mean_abs", {"E|{/:Italic x}_{/:Italic l}|", "$\\mathrm{E}|x_\\ell|$"}},
      {"act_max_abs", {"max|{/:Italic x}_{/:Italic l}|", "$\\max|x_\\ell|$"}},
      {"branch_sq", {"E[{/:Italic F}_{/:Italic k}^2]", "$\\mathrm{E}[F_k^2]$"}},
      {"rel_update",
       {"‖{/:Italic x}_{{/:Italic k}+1} − {/:Italic x}_{/:Italic k}‖ / ‖{/:Italic x}_{/:Italic k}‖",
        "$\\|x_{k+1} - x_k\\| / \\|x_k\\|$"}},
      {"eff_rank", {"erank({/:Italic x}_{/:Italic l})", "$\\mathrm{erank}(x_\\ell)$"}},
      {"output_change",
       {"‖Δ{/:Italic x}_{/:Italic l}‖^2/‖{/:Italic x}_{/:Italic l}‖^2",
        "$\\|\\Delta x_\\ell\\|^2 / \\|x_\\ell\\|^2$"}},
  };
  const auto it = known.find(metric);
  if (it != known.end()) return it->second;
  if (metric.rfind("gradw_", 0) == 0) {
    const Text w = weight_symbol(metric.substr(6));
    return {"‖∂{/:Italic L}/∂" + w.enhanced + "‖_F",
            "$\\|\\partial\\mathcal{L}/\\partial " + w.latex + "\\|_F$"};
  }
  return plain_text(metric);
}

bool metric_log_scale(const std::string& metric) {
  static const char* const magnitudes[] = {"act_sq",    "grad_sq",    "act_mean_abs", "act_max_abs",
                                           "branch_sq", "rel_update", "output_change"};
  for (const char* m : magnitudes)
    if (metric == m) return true;
  return metric.rfind("gradw_", 0) == 0;
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
