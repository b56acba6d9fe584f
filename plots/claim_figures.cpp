// Claim figures (see claim_figures.hpp).
#include "claim_figures.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string_view>

#include "line_chart.hpp"
#include "metric_labels.hpp"
#include "vocab/metrics.hpp"

namespace normsim::plots {

namespace {

// A claim's number for a caption: numbers with 4 significant digits, anything else as JSON.
std::string claim_value(const nlohmann::json& value) {
  if (value.is_number()) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.4g", value.get<double>());
    return buffer;
  }
  if (value.is_string()) return value.get<std::string>();
  return value.is_null() ? "n/a" : value.dump();
}

// A number of the title: 3 significant digits, with a real minus sign in the enhanced form.
Text title_number(double value, int digits = 3) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
  const std::string text = buffer;
  return {text[0] == '-' ? "−" + text.substr(1) : text, "$" + text + "$"};
}

// The band of a profile claim bounds the deviation from the mean field (relative: measured / mean field - 1,
// else measured - mean field), not y itself: it is said beside the mean-field curve, not shaded as a range of
// y. Empty when check wrote no band.
Text profile_band_words(const Claim& claim) {
  const bool low = claim.band_low.is_number(), high = claim.band_high.is_number();
  if (!low && !high) return plain_text("");
  const double lo = low ? claim.band_low.get<double>() : -INFINITY,
               hi = high ? claim.band_high.get<double>() : INFINITY;
  const Text pm{" ± ", " $\\pm$ "};
  if (lo == -hi) {
    if (claim.band_relative)
      return plain_text("; supported: within") + pm + title_number(100 * hi) + plain_text(" %");
    return plain_text("; supported: within") + pm + title_number(hi);
  }
  const auto side = [](bool finite, double v, const char* infinite) {
    return finite ? title_number(v)
                  : Text{infinite, std::string("$") + (infinite[0] == '-' ? "-" : "") + "\\infty$"};
  };
  return plain_text(claim.band_relative ? "; supported: measured / mean field - 1 in ["
                                        : "; supported: measured - mean field in [") +
         side(low, lo, "−∞") + plain_text(", ") + side(high, hi, "∞") + plain_text("]");
}

// A `profile` claim compares a whole measured curve with the mean-field curve: its statistic is the
// largest deviation measured - predicted, and the dashed curve is the mean field itself.
bool is_profile_fit(const Claim& claim) {
  return claim.fit == "profile";
}

// What the claim's statistic is, from how check fitted it.
std::string statistic_name(const std::string& fit) {
  if (fit == "linear") return "slope";
  if (fit == "powerlaw") return "exponent";
  if (fit == "ratio") return "ratio";
  if (fit == "profile") return "max deviation from mean field";
  return "measured";
}

// A value given with its uncertainty `half`: to the place of the half-width's second significant digit
// (−0.00413 ± 0.0049 reads −0.0041 ± 0.0049), but never more than 3 significant digits.
Text value_at_precision(double value, double half) {
  if (!(half > 0) || value == 0) return title_number(value);
  const int place = int(std::floor(std::log10(half))) - 1;  // the decimal place of half's second digit
  const int digits = int(std::floor(std::log10(std::abs(value)))) - place + 1;
  return title_number(value, std::clamp(digits, 1, 3));
}

// "supported: exponent −0.548 ± 0.029": the verdict and the fitted value with its 95% CI (± the half-width
// when the interval is symmetric, else [low, high]). The predicted value goes in the legend.
Text claim_title(const Claim& claim) {
  Text title = plain_text(claim.verdict.empty() ? "no verdict" : claim.verdict);
  if (!claim.measured.is_number()) return title;
  const double value = claim.measured.get<double>();
  const Text name = plain_text(": " + statistic_name(claim.fit) + " ");
  if (claim.ci_low.is_number() && claim.ci_high.is_number()) {
    const double low = claim.ci_low.get<double>(), high = claim.ci_high.get<double>();
    const double half = (high - low) / 2;
    if (std::abs((value - low) - (high - value)) <= 0.1 * half)
      title = title + name + (is_profile_fit(claim) ? value_at_precision(value, half) : title_number(value)) +
              Text{" ± ", " $\\pm$ "} + title_number(half, 2);
    else
      title = title + name + title_number(value) + plain_text(" [") + title_number(low) + plain_text(", ") +
              title_number(high) + plain_text("]");
  } else {
    title = title + name + title_number(value);
  }
  return title;
}

// The claim's x label in the symbols of the metric figures where it names a known axis ("layer l",
// "sublayer k", "depth K ..."), else as written.
Text claim_x_label(const std::string& label) {
  const auto starts = [&](const std::string& head) {
    return label == head || label.rfind(head + " ", 0) == 0;
  };
  if (label.empty()) return plain_text("x");
  if (starts("layer l")) return layer_axis_label("act_sq") + plain_text(label.substr(7));
  if (starts("sublayer k")) return layer_axis_label("cos_next") + plain_text(label.substr(10));
  if (starts("depth K")) {
    const std::string rest = label.substr(7);
    if (rest == " (sublayers)") return depth_axis_label();
    return Text{"depth {/:Italic K}", "depth $K$"} + plain_text(rest);
  }
  return plain_text(label);
}

// A label compared with a metric's plain-text names: lower case, without spaces and underscores
// ("||dL/dW_2||_F" and "||dL/dW2||_F" are the same name).
std::string label_key(const std::string& text) {
  std::string key;
  for (unsigned char c : text)
    if (c != ' ' && c != '_') key += static_cast<char>(std::tolower(c));
  return key;
}

// Whether `head` names `metric` in plain text: its name, or the plain-text forms of its symbol that claims
// write (its row's claim names in vocab/metrics.def: token cosine, relative update, E[x_l^2], ...; for a
// gradw_<w>, ||dL/dw|| and the like). Symbols in other letters (cos(x_t, x_t+1) for cos_next's cos(x_k,
// x_{k+1})) do not: the claim's axis uses those letters.
bool names_metric(const std::string& head, const std::string& metric) {
  const std::string key = label_key(head);
  if (key.empty()) return false;
  if (key == label_key(metric)) return true;
  if (metric.rfind("gradw_", 0) == 0) {
    const std::string w = label_key(metric.substr(6));
    for (const std::string& body : {"||dl/d" + w + "||", "||dloss/d" + w + "||", "‖∂l/∂" + w + "‖"})
      if (key == body || key == body + "f") return true;
  }
  const int id = vocab::metric_id(metric);
  if (id < 0) return false;
  std::string_view names = vocab::metric_table()[std::size_t(id)].claim_names;
  while (!names.empty()) {
    const auto end = std::min(names.find(';'), names.size());
    if (key == label_key(std::string(names.substr(0, end)))) return true;
    names.remove_prefix(std::min(end + 1, names.size()));
  }
  return false;
}

// The claim's y label: the metric's symbol (as on the metric figures) where it replaces the whole label
// cleanly, else the label as written (escaped). Cleanly: the label is a plain-text name of the metric (see
// names_metric), optionally followed by a parenthesized alternative symbol, which is dropped
// ("act_sq (v_l)"), or by "of the ..."/"at the ..." ("||dL/dW2|| of the last layer" reads
// "‖∂L/∂W₂‖_F (last layer)", as on the depth figures). Anything else ("cos(x_t, x_t+1)", "||dW2|| layer 50 /
// layer 1", "max act_sq") is a quantity of its own, which a symbol put in front of part of it would garble.
Text claim_y_label(const Claim& claim) {
  const std::string& label = claim.y_label;
  const Text own = plain_text(label.empty() ? "measured" : label);
  if (claim.metric.empty() || metric_label(claim.metric).enhanced == plain_text(claim.metric).enhanced)
    return own;
  std::string head = label, rest;
  for (const char* lead : {" of the ", " at the "}) {
    const auto at = label.find(lead);
    if (at != std::string::npos && at + 8 < label.size()) {
      head = label.substr(0, at), rest = " (" + label.substr(at + 8) + ")";
      break;
    }
  }
  const auto open = label.rfind(" (");
  if (rest.empty() && open != std::string::npos && label.back() == ')' &&
      label.find_first_of("()", open + 2) == label.size() - 1)
    head = label.substr(0, open);  // a parenthesized alternative symbol: dropped
  if (!names_metric(head, claim.metric)) return own;
  return metric_label(claim.metric) + plain_text(rest);
}

}  // namespace

std::vector<Figure> claim_figures(const ResultsFolder& folder) {
  std::vector<Figure> figures;
  for (const Claim& claim : folder.claims) {
    if (claim.points.empty()) continue;
    ChartPanel panel;
    panel.x_label = claim_x_label(claim.x_label);
    panel.y_label = claim_y_label(claim);
    panel.title = claim_title(claim);
    // A log axis needs positive values; a claim asking for one on other data gets a linear axis instead.
    bool positive_x = true, positive_y = true;
    for (const auto& p : claim.points) positive_x &= p.x > 0, positive_y &= p.measured > 0;
    panel.log_x = claim.log_x && positive_x;
    panel.log_y = claim.log_y && positive_y;
    panel.errors = claim.figure_kind == "profile" ? ErrorStyle::band : ErrorStyle::bars;
    panel.connect = claim.figure_kind != "points";
    // The legend says what the dashed curve is: the mean-field curve of a profile claim, else the
    // prediction with its value (the statistic's, e.g. the exponent of a power law).
    panel.reference_title = plain_text(is_profile_fit(claim) ? "mean field" : "predicted");
    if (claim.predicted.is_number() && !is_profile_fit(claim))
      panel.reference_title = panel.reference_title + plain_text(" (") +
                              title_number(claim.predicted.get<double>()) + plain_text(")");
    ChartSeries measured{plain_text("measured"), "measured", {}};
    for (const auto& p : claim.points) measured.points.push_back({p.x, p.measured, p.se, p.predicted});
    panel.series.push_back(std::move(measured));
    // A `points` claim's y values are its statistic itself (a ratio, a bound's value): its supported range
    // (band_low..band_high) is a range of y and is shaded across the plot. A profile claim's band is a range
    // of its deviation from the mean field: the legend says it beside the curve (profile_band_words).
    if (is_profile_fit(claim)) panel.reference_title = panel.reference_title + profile_band_words(claim);
    if (claim.figure_kind == "points" && !is_profile_fit(claim)) {
      if (claim.band_low.is_number()) panel.band_low = claim.band_low.get<double>();
      if (claim.band_high.is_number()) panel.band_high = claim.band_high.get<double>();
      // A claim not testable at init keeps its band for reference, named as what it is: not judged.
      const bool untestable = claim.verdict.rfind("not testable", 0) == 0;
      const bool unjudged = claim.verdict.rfind("not judged", 0) == 0;
      panel.band_title = plain_text(untestable                ? "claimed range (not judged at init)"
                                    : unjudged                ? "range of normsim's reading (not judged)"
                                    : claim.kind == "reading" ? "range consistent with normsim's reading"
                                                              : "supported range");
    }
    // At one-column size a legend beside the plot would take half its width: under it, the plot is wide.
    panel.legend_below = true;

    Figure figure;
    figure.name = "claim_" + claim.id;
    figure.kind = "claim";
    figure.caption =
        "Claim " + claim.id + (claim.statement.empty() ? "" : ": " + claim.statement) +
        (claim.source.empty() ? "" : " (" + claim.source + ")") +
        ". Verdict: " + (claim.verdict.empty() ? "none" : claim.verdict) +
        (is_profile_fit(claim)
             ? "; max deviation from mean field " + claim_value(claim.measured)
             : "; predicted " + claim_value(claim.predicted) + ", measured " + claim_value(claim.measured)) +
        " (95% CI " + claim_value(claim.ci_low) + " to " + claim_value(claim.ci_high) +
        "). Points: measured +- s.e.; dashed: " + (is_profile_fit(claim) ? "mean field" : "predicted") +
        (panel.band_low || panel.band_high ? "; shaded: the supported range" : "") +
        ". The title gives the verdict and the fitted statistic with its 95% CI.";
    figure.csv = chart_csv({panel});
    figure.script = {figure.name, "Claim " + claim.id + ": measured against predicted", chart_columns,
                     chart_preamble({panel}), chart_body({panel})};
    figures.push_back(std::move(figure));
  }
  return figures;
}

}  // namespace normsim::plots
