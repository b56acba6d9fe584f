// Per-layer profile figures (see profile_figures.hpp).
#include "profile_figures.hpp"

#include <algorithm>

#include "facets.hpp"
#include "grouping.hpp"
#include "line_chart.hpp"
#include "metric_labels.hpp"

namespace normsim::plots {

std::vector<Figure> profile_figures(const ResultsFolder& folder, const std::vector<std::string>& metrics) {
  std::vector<Figure> figures;
  const Layout layout = choose_layout(folder, {}, false);
  for (const auto& metric : metrics) {
    const auto groups =
        group_rows(folder, layout.figure_keys, [&](const SummaryRow& r) { return r.metric == metric; });
    for (const auto& group : groups) {
      ChartPanel panel;
      panel.x_label = layer_axis_label(metric);
      panel.y_label = metric_label(metric);
      panel.log_y = metric_log_scale(metric);
      panel.reference_title = plain_text("mean field");
      long fewest = -1, most = 0;
      bool any_theory = false;
      for (const auto& s : split_series(folder, layout.series_key, group.rows)) {
        ChartSeries series{s.title, s.value.empty() ? s.config : s.value, {}};
        for (const SummaryRow* row : s.rows) {
          series.points.push_back(
              {double(row->layer), row->mean, row->se, folder.theory_at(row->config, row->layer, metric)});
          any_theory |= series.points.back().reference.has_value();
          fewest = fewest < 0 ? row->n : std::min(fewest, row->n);
          most = std::max(most, row->n);
        }
        panel.series.push_back(std::move(series));
      }

      Figure figure;
      figure.name =
          "profile_" + file_stem_part(metric) + group_suffix(folder, layout.figure_keys, group.values);
      figure.kind = "profile";
      const std::string where = group_caption(folder, layout.figure_keys, group.values);
      figure.caption =
          folder.metric_description(metric) + " per layer: mean and standard-error band over " +
          (fewest == most ? std::to_string(most) : std::to_string(fewest) + "-" + std::to_string(most)) +
          " samples" +
          (layout.series_key >= 0 ? ", one line per " + folder.keys[std::size_t(layout.series_key)] : "") +
          (where.empty() ? "" : "; " + where) + "." +
          // Only what is drawn: a folder without theory.csv (a PyTorch bridge result) has no grey curve.
          (any_theory ? " Thin grey dashes: the mean-field theory (theory.csv), where it has a prediction."
                      : "");
      const auto panels =
          facet_panels(panel, layout.series_key >= 0 ? folder.keys[std::size_t(layout.series_key)] : "");
      if (panels.size() > 1)
        figure.caption += " Facets: " + std::to_string(panels.size()) +
                          " panels of at most six lines, each line named at its right end.";
      auto marked = panels;
      mark_left_out(marked, figure.caption, folder.left_out(metric, layout.figure_keys, group.values));
      figure.csv = chart_csv(marked);
      figure.script =
          chart_script(figure.name,
                       "Per-layer profile of " + metric + (where.empty() ? "" : " (" + where + ")") +
                           (any_theory ? "; dashed: mean-field theory from theory.csv" : ""),
                       marked);
      figures.push_back(std::move(figure));
    }
  }
  return figures;
}

}  // namespace normsim::plots
