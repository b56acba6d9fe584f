// Depth-scaling figures with power-law fits (see depth_figures.hpp).
#include "depth_figures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "facets.hpp"
#include "grouping.hpp"
#include "line_chart.hpp"
#include "metric_labels.hpp"
#include "sample_values.hpp"
#include "stats/growth.hpp"

namespace normsim::plots {

namespace {

// One point per configuration: the metric at its last (or first) layer.
struct DepthPoint {
  double depth;
  const SummaryRow* row;
};

std::string format(const char* spec, double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, spec, value);
  return buffer;
}

// Rounded first, so that a flat line reads 0.00 rather than -0.00; "−" for the enhanced form's minus.
std::pair<std::string, std::string> signed_text(double value, const char* spec) {
  const std::string text = format(spec, std::stod(format(spec, value)) == 0 ? 0.0 : value);
  return {text[0] == '-' ? "−" + text.substr(1) : text, text};
}

// The legend's growth: "K^{0.98 ± 0.03}" or "e^{(0.121 ± 0.004) K}", the ± a 95% interval (none from one
// sample).
Text growth_text(const stats::GrowthFit& fit) {
  const stats::Estimate& b = fit.line.slope;
  const bool ci = b.n > 1 && std::isfinite(b.high);
  const bool power = fit.model == stats::Growth::power_law;
  const char* spec = power ? "%.2f" : "%.3g";
  const auto [enhanced, latex] = signed_text(b.value, spec);
  const std::string half = ci ? format(power ? spec : "%.2g", b.high - b.value) : "";
  if (power)
    return {"{/:Italic K}^{" + enhanced + (ci ? " ± " + half : "") + "}",
            "$K^{" + latex + (ci ? " \\pm " + half : "") + "}$"};
  return {"e^{" + (ci ? "(" + enhanced + " ± " + half + ")" : enhanced) + " {/:Italic K}}",
          "$e^{" + (ci ? "(" + latex + " \\pm " + half + ")" : latex) + " K}$"};
}

// Every sample's value at each point's configuration (rows: samples; NaN where a sample has none).
std::vector<std::vector<double>> sample_rows(const SampleValues& values,
                                             const std::vector<DepthPoint>& points, DepthLayer at) {
  std::vector<std::vector<double>> rows;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto it = values.find({points[i].row->config, points[i].row->metric});
    if (it == values.end()) continue;
    const auto& by_sample = at == DepthLayer::last ? it->second.last : it->second.first;
    if (rows.size() < by_sample.size())
      rows.resize(by_sample.size(), std::vector<double>(points.size(), std::nan("")));
    for (std::size_t s = 0; s < by_sample.size(); ++s) rows[s][i] = by_sample[s];
  }
  return rows;
}

// The growth a series is described by: the model the comparison says holds, else the power law (the
// legend then adds "or exponential?" when three or more depths could not tell them apart).
struct SeriesGrowth {
  std::optional<stats::GrowthFit> fit;
  bool undecided = false;  // three or more depths, and the interval of the comparison straddles 0
};

SeriesGrowth series_growth(const std::vector<DepthPoint>& points,
                           const std::vector<std::vector<double>>& rows) {
  std::vector<double> x;
  for (const auto& p : points) x.push_back(p.depth);
  SeriesGrowth g;
  const auto comparison = stats::compare_growth(x, rows);
  const auto model = comparison && comparison->holds ? *comparison->holds : stats::Growth::power_law;
  g.fit = stats::fit_growth(x, rows, model);
  g.undecided = comparison && !comparison->holds;
  return g;
}

// What the legend's growth and the grey curve are, in the caption (only what is drawn).
std::string fit_caption(bool theory, bool undecided, bool fitted) {
  std::string c = theory ? "Thin grey dashes: the mean field (theory.csv), under every line that has one at "
                           "every depth; a line marked \"no mean field\" has none (normsim run says why). "
                         : "Thin grey dashes: the fitted growth of each line. ";
  if (!fitted) return c + "No exponent is fitted: the folder has no layers.csv with per-sample values.";
  c +=
      "Legend: each line's growth, fitted per sample by least squares of ln y on ln K (power law K^b) and on "
      "K (exponential e^{bK}), averaged over samples; ± is the 95% confidence interval of b (Student t over "
      "the samples, as normsim check fits a claim). The model shown is the one whose residuals are smaller, "
      "by the mean over samples of ln(SSR_power / SSR_exponential) with its 95% interval excluding 0";
  if (undecided)
    c += "; \"(or exponential)\": that interval includes 0, so over these depths the two cannot "
         "be told apart and the power law is shown";
  return c + ". With two depths only the power law is fitted.";
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
  const SampleValues values = read_end_values(
      folder.dir / "layers.csv", std::set<std::string>(metrics.begin(), metrics.end()), folder.step);
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
      panel.connect = false;  // the reference curve, not a polyline, joins the depths
      panel.dodge = true;     // variants that agree would hide one another

      // Series by the series key's value; each holds one configuration per depth.
      std::vector<std::pair<std::string, std::vector<DepthPoint>>> lines;
      for (const auto& s : split_series(folder, layout.series_key, group.rows)) {
        const SummaryRow* pick = at == DepthLayer::last ? s.rows.back() : s.rows.front();
        const double depth = std::strtod(pick->keys[std::size_t(depth_key)].c_str(), nullptr);
        auto it = std::find_if(lines.begin(), lines.end(), [&](auto& l) { return l.first == s.value; });
        if (it == lines.end()) it = lines.insert(lines.end(), {s.value, {}});
        it->second.push_back({depth, pick});
      }
      // The mean field is the reference of every line that has it at every depth; a line without it says so
      // in its legend entry. Only when no line has it do the fitted growths take its place.
      bool any_theory = false, any_undecided = false;
      std::vector<bool> has_theory;
      for (auto& [value, points] : lines) {
        std::sort(points.begin(), points.end(), [](auto& a, auto& b) { return a.depth < b.depth; });
        has_theory.push_back(std::all_of(points.begin(), points.end(), [&](const DepthPoint& p) {
          return folder.theory_at(p.row->config, p.row->layer, metric).has_value();
        }));
        any_theory |= has_theory.back();
      }
      for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto& [value, points] = lines[i];
        const SeriesGrowth growth = series_growth(points, sample_rows(values, points, at));
        any_undecided |= growth.undecided;
        Text title = layout.series_key >= 0 ? value_title(folder.keys[std::size_t(layout.series_key)], value)
                                            : plain_text(metric);
        if (growth.fit) title = title + plain_text(": ") + growth_text(*growth.fit);
        if (growth.undecided) title = title + plain_text(" (or exponential)");
        if (any_theory && !has_theory[i]) title = title + plain_text(", no mean field");
        ChartSeries series{title, value.empty() ? metric : value, {}};
        for (const auto& p : points) {
          const auto reference = has_theory[i] ? folder.theory_at(p.row->config, p.row->layer, metric)
                                 : !any_theory && growth.fit
                                     ? std::optional<double>(growth.fit->predict(p.depth))
                                     : std::nullopt;
          series.points.push_back({p.depth, p.row->mean, p.row->se, reference});
        }
        panel.series.push_back(std::move(series));
      }
      panel.log_y = metric_log_scale(metric);
      panel.reference_title = plain_text(any_theory ? "mean field" : "fitted growth");

      Figure figure;
      figure.name = "depth_" + file_stem_part(metric) + "_" + which +
                    group_suffix(folder, layout.figure_keys, group.values);
      figure.kind = "depth";
      const std::string where = group_caption(folder, layout.figure_keys, group.values);
      figure.caption = folder.metric_description(metric) +
                       (at == DepthLayer::last ? " at the last layer" : " at layer 0") +
                       " against depth K: mean with standard-error bars (the lines' points spread by a few "
                       "percent in K, so that coinciding ones stay visible)" +
                       (where.empty() ? "" : "; " + where) + ". " +
                       fit_caption(any_theory, any_undecided, !values.empty());
      auto panels =
          facet_panels(panel, layout.series_key >= 0 ? folder.keys[std::size_t(layout.series_key)] : "");
      mark_left_out(panels, figure.caption, folder.left_out(metric, layout.figure_keys, group.values));
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
