// Gradient-norm profile figures (see gradient_figures.hpp): one panel per gradient metric.
#include "gradient_figures.hpp"

#include <algorithm>

#include "facets.hpp"
#include "grouping.hpp"
#include "line_chart.hpp"
#include "metric_labels.hpp"

namespace normsim::plots {

namespace {

// One gradients figure: `panels` (one per metric in panels_of), named gradients<suffix>.
Figure gradient_figure(const ResultsFolder& folder, const Layout& layout, const RowGroup& group,
                       std::vector<ChartPanel> panels, const std::vector<std::string>& panels_of,
                       const std::string& suffix, const std::string& facet) {
  Figure figure;
  figure.name = "gradients" + suffix;
  figure.kind = "gradients";
  const std::string where = group_caption(folder, layout.figure_keys, group.values);
  std::string shown;
  for (const auto& metric : panels_of) shown += (shown.empty() ? "" : ", ") + metric;
  figure.caption =
      "Gradient norms per layer (" + shown + "), mean and standard-error band" +
      (layout.series_key >= 0 ? ", one line per " + folder.keys[std::size_t(layout.series_key)] : "") +
      (where.empty() ? "" : "; " + where) + (facet.empty() ? "" : "; " + facet) + ".";
  bool any_theory = false;  // the caption says only what is drawn
  for (const auto& panel : panels)
    for (const auto& series : panel.series)
      for (const auto& point : series.points) any_theory |= point.reference.has_value();
  if (any_theory)
    figure.caption += " Thin grey dashes: the mean-field theory (theory.csv), where it has a prediction.";
  for (std::size_t i = 0; i < panels.size() && i < panels_of.size(); ++i) {
    std::vector<ChartPanel> one{panels[i]};
    mark_left_out(one, figure.caption, folder.left_out(panels_of[i], layout.figure_keys, group.values));
    panels[i] = one.front();
  }
  figure.csv = chart_csv(panels);
  figure.script = {figure.name,
                   "Gradient-norm profiles" + (where.empty() ? "" : " (" + where + ")") +
                       (any_theory ? "; dashed: mean-field theory from theory.csv" : ""),
                   chart_columns,
                   chart_preamble(panels),
                   chart_body(panels),
                   static_cast<int>(panels.size())};
  return figure;
}

}  // namespace

std::vector<Figure> gradient_figures(const ResultsFolder& folder, const std::vector<std::string>& metrics) {
  std::vector<std::string> panels_of;
  for (const char* metric : {"grad_sq", "gradw_w2", "gradw_w1"})
    if (folder.has_metric(metric) && std::find(metrics.begin(), metrics.end(), metric) != metrics.end())
      panels_of.push_back(metric);
  if (panels_of.empty()) return {};

  std::vector<Figure> figures;
  const Layout layout = choose_layout(folder, {}, false);
  const auto is_gradient = [&](const SummaryRow& r) {
    return std::find(panels_of.begin(), panels_of.end(), r.metric) != panels_of.end();
  };
  for (const auto& group : group_rows(folder, layout.figure_keys, is_gradient)) {
    std::vector<ChartPanel> panels;
    std::vector<std::string> shown;  // the metrics this group has: an attention-only group has no gradw_w*
    for (const auto& metric : panels_of) {
      ChartPanel panel;
      panel.x_label = layer_axis_label(metric);
      panel.y_label = metric_label(metric);
      panel.log_y = metric_log_scale(metric);
      panel.reference_title = plain_text("mean field");
      std::vector<const SummaryRow*> rows;
      for (const SummaryRow* row : group.rows)
        if (row->metric == metric) rows.push_back(row);
      for (const auto& s : split_series(folder, layout.series_key, rows)) {
        ChartSeries series{s.title, s.value.empty() ? s.config : s.value, {}};
        for (const SummaryRow* row : s.rows)
          series.points.push_back(
              {double(row->layer), row->mean, row->se, folder.theory_at(row->config, row->layer, metric)});
        panel.series.push_back(std::move(series));
      }
      if (panel.series.empty()) continue;
      panels.push_back(std::move(panel));
      shown.push_back(metric);
    }
    if (panels.empty()) continue;

    // More than six lines: one figure per facet (placement family), each a full set of panels.
    const std::string key = layout.series_key >= 0 ? folder.keys[std::size_t(layout.series_key)] : "";
    std::vector<std::string> labels;
    for (const auto& s : panels.front().series) labels.push_back(s.label);
    const auto facets = facets_of(key, labels);
    for (const auto& facet : facets) {
      std::vector<ChartPanel> part = panels;
      for (auto& panel : part) {
        std::vector<ChartSeries> kept;
        for (std::size_t i : facet.members)
          for (const auto& s : panel.series)
            if (s.label == labels[i]) kept.push_back(s);
        panel.series = std::move(kept);
      }
      const std::string suffix = group_suffix(folder, layout.figure_keys, group.values) +
                                 (facets.size() > 1 ? "_" + file_stem_part(facet.slug) : "");
      figures.push_back(gradient_figure(folder, layout, group, part, shown, suffix, facet.title));
    }
  }
  return figures;
}

}  // namespace normsim::plots
