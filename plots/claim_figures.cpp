// Claim figures (see claim_figures.hpp).
#include "claim_figures.hpp"

#include "line_chart.hpp"

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

}  // namespace

std::vector<Figure> claim_figures(const ResultsFolder& folder) {
  std::vector<Figure> figures;
  for (const Claim& claim : folder.claims) {
    if (claim.points.empty()) continue;
    ChartPanel panel;
    panel.x_label = plain_text(claim.x_label.empty() ? "x" : claim.x_label);
    panel.y_label = plain_text(claim.y_label.empty() ? "measured" : claim.y_label);
    panel.log_x = claim.log_x;
    // A log axis needs positive values; a claim asking for one on other data gets a linear axis instead.
    bool positive_x = true, positive_y = true;
    for (const auto& p : claim.points) positive_x &= p.x > 0, positive_y &= p.measured > 0;
    panel.log_x = claim.log_x && positive_x;
    panel.log_y = claim.log_y && positive_y;
    panel.errors = claim.figure_kind == "profile" ? ErrorStyle::band : ErrorStyle::bars;
    panel.connect = claim.figure_kind != "points";
    panel.reference_title = plain_text("predicted");
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
                     "). Points: measured +- s.e.; dashed: predicted.";
    figure.csv = chart_csv({panel});
    figure.script = {figure.name, "Claim " + claim.id + ": measured against predicted", chart_columns,
                     chart_preamble({panel}), chart_body({panel})};
    figures.push_back(std::move(figure));
  }
  return figures;
}

}  // namespace normsim::plots
