// Claim figures (see claim_figures.hpp).
#include "claim_figures.hpp"

#include <cmath>
#include <cstdio>

#include "line_chart.hpp"
#include "metric_labels.hpp"

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

// What the claim's statistic is, from how check fitted it.
std::string statistic_name(const std::string& fit) {
  if (fit == "linear") return "slope";
  if (fit == "powerlaw") return "exponent";
  if (fit == "ratio") return "ratio";
  return "measured";
}

// "supported: exponent −0.548 ± 0.029": the verdict and the fitted value with its 95% CI (± the half-width
// when the interval is symmetric, else [low, high]). The predicted value goes in the legend.
Text claim_title(const Claim& claim) {
  Text title = plain_text(claim.verdict.empty() ? "no verdict" : claim.verdict);
  if (!claim.measured.is_number()) return title;
  const double value = claim.measured.get<double>();
  title = title + plain_text(": " + statistic_name(claim.fit) + " ") + title_number(value);
  if (claim.ci_low.is_number() && claim.ci_high.is_number()) {
    const double low = claim.ci_low.get<double>(), high = claim.ci_high.get<double>();
    const double half = (high - low) / 2;
    if (std::abs((value - low) - (high - value)) <= 0.1 * half)
      title = title + Text{" ± ", " $\\pm$ "} + title_number(half, 2);
    else
      title = title + plain_text(" [") + title_number(low) + plain_text(", ") + title_number(high) +
              plain_text("]");
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

// The claim's y label: the metric's symbol (as on the metric figures) when verdicts.json names a metric,
// followed by what the claim's own label adds after its plain-text symbol ("(last layer)" for "of the last
// layer", "layer 50 / layer 1"); a parenthesized alternative symbol is dropped. Without a known metric: the
// label as written.
Text claim_y_label(const Claim& claim) {
  const std::string& label = claim.y_label;
  if (claim.metric.empty() || metric_label(claim.metric).enhanced == plain_text(claim.metric).enhanced)
    return plain_text(label.empty() ? "measured" : label);
  std::string rest;
  const auto space = label.find(' ');
  if (space != std::string::npos) rest = label.substr(space + 1);
  if (!rest.empty() && rest.front() == '(' && rest.back() == ')' && rest.find(')') == rest.size() - 1)
    rest.clear();
  // "of the last layer" reads as "(last layer)", as on the depth figures, and keeps the label short.
  for (const char* lead : {"of the ", "at the "})
    if (rest.rfind(lead, 0) == 0) rest = "(" + rest.substr(7) + ")";
  Text text = metric_label(claim.metric);
  if (!rest.empty()) text = text + plain_text(" " + rest);
  return text;
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
    panel.reference_title = plain_text("predicted");
    if (claim.predicted.is_number())
      panel.reference_title = panel.reference_title + plain_text(" (") +
                              title_number(claim.predicted.get<double>()) + plain_text(")");
    ChartSeries measured{plain_text("measured"), "measured", {}};
    for (const auto& p : claim.points) measured.points.push_back({p.x, p.measured, p.se, p.predicted});
    panel.series.push_back(std::move(measured));

    Figure figure;
    figure.name = "claim_" + claim.id;
    figure.kind = "claim";
    figure.caption = "Claim " + claim.id + (claim.statement.empty() ? "" : ": " + claim.statement) +
                     (claim.source.empty() ? "" : " (" + claim.source + ")") +
                     ". Verdict: " + (claim.verdict.empty() ? "none" : claim.verdict) + "; predicted " +
                     claim_value(claim.predicted) + ", measured " + claim_value(claim.measured) +
                     " (95% CI " + claim_value(claim.ci_low) + " to " + claim_value(claim.ci_high) +
                     "). Points: measured +- s.e.; dashed: predicted. The title gives the verdict and the "
                     "fitted statistic with its 95% CI.";
    figure.csv = chart_csv({panel});
    figure.script = {figure.name, "Claim " + claim.id + ": measured against predicted", chart_columns,
                     chart_preamble({panel}), chart_body({panel})};
    figures.push_back(std::move(figure));
  }
  return figures;
}

}  // namespace normsim::plots
