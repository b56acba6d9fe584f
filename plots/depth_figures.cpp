// Depth-scaling figures with power-law fits (see depth_figures.hpp).
#include "depth_figures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "facets.hpp"
#include "fit.hpp"
#include "grouping.hpp"
#include "line_chart.hpp"
#include "metric_labels.hpp"

namespace normsim::plots {

namespace {

// One point per configuration: the metric at its last (or first) layer.
struct DepthPoint {
  double depth;
  const SummaryRow* row;
};

std::string fixed2(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", value);
  return buffer;
}

// "Pre: slope −0.50 ± 0.03" in both forms; the CI is left out with two depths (no residual).
Text fitted_title(const Text& title, const PowerLawFit& fit) {
  // Rounded first, so a flat line reads 0.00 rather than -0.00.
  const double exponent = std::round(fit.exponent * 100) / 100;
  const std::string slope = fixed2(exponent == 0 ? 0.0 : exponent);
  const bool ci = std::isfinite(fit.exponent_ci95);
  const std::string enhanced_slope = (slope[0] == '-' ? "−" + slope.substr(1) : slope);
  return {title.enhanced + ": {/:Italic K}^{" + enhanced_slope +
              (ci ? " ± " + fixed2(fit.exponent_ci95) : "") + "}",
          title.latex + ": $K^{" + slope + (ci ? " \\pm " + fixed2(fit.exponent_ci95) : "") + "}$"};
}

}  // namespace

std::vector<Figure> depth_figures(const ResultsFolder& folder, const std::vector<std::string>& metrics,
                                  DepthLayer at) {
  std::vector<Figure> figures;
  const int depth_key = folder.key_index("depth");
  if (depth_key < 0 || key_values(folder, depth_key).size() < 2) return figures;
  const auto depths = key_values(folder, depth_key);
  for (const auto& d : depths) {
    char* end = nullptr;
    if (!(std::strtod(d.c_str(), &end) > 0)) return figures;  // not numbers: no log axis to draw them on
  }
  const Layout layout = choose_layout(folder, {"depth"}, false);
  const std::string which = at == DepthLayer::last ? "last" : "first";

  for (const auto& metric : metrics) {
    const auto groups =
        group_rows(folder, layout.figure_keys, [&](const SummaryRow& r) { return r.metric == metric; });
    for (const auto& group : groups) {
      ChartPanel panel;
      panel.x_label = depth_axis_label();
      panel.y_label = metric_label(metric) + Text{at == DepthLayer::last ? " (last layer)" : " (layer 0)",
                                                  at == DepthLayer::last ? " (last layer)" : " (layer 0)"};
      panel.log_x = true;
      panel.log_x_base = 2;
      panel.errors = ErrorStyle::bars;
      panel.connect = false;  // the fitted line, not a polyline, joins the depths
      panel.reference_title = plain_text("least-squares fit");

      // Series by the series key's value; each holds one configuration per depth.
      std::vector<std::pair<std::string, std::vector<DepthPoint>>> lines;
      for (const auto& s : split_series(folder, layout.series_key, group.rows)) {
        const SummaryRow* pick = at == DepthLayer::last ? s.rows.back() : s.rows.front();
        const double depth = std::strtod(pick->keys[std::size_t(depth_key)].c_str(), nullptr);
        auto it = std::find_if(lines.begin(), lines.end(), [&](auto& l) { return l.first == s.value; });
        if (it == lines.end()) it = lines.insert(lines.end(), {s.value, {}});
        it->second.push_back({depth, pick});
      }
      for (auto& [value, points] : lines) {
        std::sort(points.begin(), points.end(), [](auto& a, auto& b) { return a.depth < b.depth; });
        std::vector<double> x, y;
        for (const auto& p : points) x.push_back(p.depth), y.push_back(p.row->mean);
        const auto fit = fit_power_law(x, y);
        const Text title = layout.series_key >= 0
                               ? value_title(folder.keys[std::size_t(layout.series_key)], value)
                               : plain_text(metric);
        ChartSeries series{fit ? fitted_title(title, *fit) : title, value.empty() ? metric : value, {}};
        for (const auto& p : points)
          series.points.push_back({p.depth, p.row->mean, p.row->se,
                                   fit ? std::optional<double>(fit->predict(p.depth)) : std::nullopt});
        panel.series.push_back(std::move(series));
      }
      panel.log_y = metric_log_scale(metric);

      Figure figure;
      figure.name = "depth_" + file_stem_part(metric) + "_" + which +
                    group_suffix(folder, layout.figure_keys, group.values);
      figure.kind = "depth";
      const std::string where = group_caption(folder, layout.figure_keys, group.values);
      figure.caption = folder.metric_description(metric) +
                       (at == DepthLayer::last ? " at the last layer" : " at layer 0") +
                       " against depth K (mean and standard error)" + (where.empty() ? "" : "; " + where) +
                       ". Thin grey dashes: least-squares fit of log mean on log K; the legend gives the "
                       "exponent with its "
                       "95% confidence interval (Student t, n-2 degrees of freedom).";
      const auto panels =
          facet_panels(panel, layout.series_key >= 0 ? folder.keys[std::size_t(layout.series_key)] : "");
      figure.csv = chart_csv(panels);
      figure.script = chart_script(figure.name,
                                   "Depth scaling of " + metric + " at the " + which + " layer" +
                                       (where.empty() ? "" : " (" + where + ")"),
                                   panels);
      figures.push_back(std::move(figure));
    }
  }
  return figures;
}

}  // namespace normsim::plots
