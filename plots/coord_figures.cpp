// The figures of a coordinate check (see coord_figures.hpp).
#include "coord_figures.hpp"

#include <cmath>
#include <map>
#include <set>

#include "facets.hpp"
#include "io/csv_read.hpp"
#include "io_errors.hpp"
#include "line_chart.hpp"
#include "metric_labels.hpp"

namespace normsim::plots {

namespace {

namespace fs = std::filesystem;

using Rows = std::vector<std::size_t>;  // row numbers of one (setting, metric)

std::map<std::pair<std::string, std::string>, Rows> by_setting_metric(const io::CsvTable& t) {
  std::map<std::pair<std::string, std::string>, Rows> groups;
  const int setting = t.require("setting"), metric = t.require("metric");
  for (std::size_t r = 0; r < t.rows.size(); ++r)
    groups[{t.rows[r][std::size_t(setting)], t.rows[r][std::size_t(metric)]}].push_back(r);
  return groups;
}

std::string stem(const std::string& kind, const std::string& metric, const std::string& setting) {
  return "coord_" + kind + "_" + file_stem_part(metric) +
         (setting.empty() ? "" : "_" + file_stem_part(setting));
}

Figure make_figure(const std::string& name, const std::string& caption, const std::string& description,
                   const ChartPanel& panel) {
  Figure f;
  f.name = name;
  f.kind = "coord";
  f.caption = caption;
  f.csv = chart_csv({panel});
  f.script = chart_script(name, description, {panel});
  return f;
}

// The layer mean against step, a line per swept value.
Figure lines_figure(const io::CsvTable& t, const Rows& rows, const std::string& setting,
                    const std::string& metric) {
  const std::string key = t.rows[rows.front()][std::size_t(t.require("swept"))];
  const int swept = t.require(key), step = t.require("step"), mean = t.require("mean"), se = t.require("se");
  ChartPanel panel;
  panel.x_label = plain_text("step");
  panel.y_label = metric_label(metric) + plain_text(" (layer mean)");
  panel.log_y = true;
  panel.errors = ErrorStyle::bars;
  panel.title = plain_text(setting);
  std::map<double, ChartSeries> series;
  for (std::size_t r : rows) {
    const double x = io::parse_number(t, r, swept);
    auto& s = series[x];
    s.label = t.rows[r][std::size_t(swept)];
    s.title = plain_text(key + " = " + s.label);
    s.points.push_back(
        {io::parse_number(t, r, step), io::parse_number(t, r, mean), io::parse_number(t, r, se), {}});
  }
  for (auto& [x, s] : series) panel.series.push_back(std::move(s));
  return make_figure(
      stem("lines", metric, setting),
      metric + "'s mean over layers against the training step, a line per " + key +
          " (mean and standard error over samples): a width- or depth-invariant quantity draws "
          "lines that lie on one another (microsoft/mup's coord check).",
      "Coordinate check of " + metric + " over " + key, panel);
}

double optional_number(const io::CsvTable& t, std::size_t r, int c, double absent) {
  return t.rows[r][std::size_t(c)].empty() ? absent : io::parse_number(t, r, c);
}

// The layer groups an exponent figure draws: the layer mean, and in a depth sweep index 0 and the last layer
// (where the depth rows predict; an index's place in the stack moves with depth).
bool drawn_layers(const std::string& layers, const std::string& key) {
  return layers == "mean" || (key == "depth" && (layers == "0" || layers == "last"));
}

Text layers_title(const std::string& layers) {
  return plain_text(layers == "mean" ? "layer mean" : layers == "last" ? "last layer" : "layer 0");
}

// The fitted exponent against step, a series per drawn layer group, its prediction dashed, the band shaded.
std::optional<Figure> exponent_figure(const io::CsvTable& t, const Rows& rows, const std::string& setting,
                                      const std::string& metric) {
  const int layers = t.require("layers"), step = t.require("step"), b = t.require("exponent");
  const int high = t.require("high"), predicted = t.require("predicted");
  const int band_low = t.require("band_low"), band_high = t.require("band_high");
  const std::string key = t.rows[rows.front()][std::size_t(t.require("swept"))];
  ChartPanel panel;
  panel.x_label = plain_text("step");
  panel.y_label = plain_text("exponent of " + key);
  panel.errors = ErrorStyle::bars;
  panel.reference_title = plain_text("predicted");
  panel.title = plain_text(setting);
  std::map<std::string, ChartSeries> series;
  std::set<std::pair<double, double>> bands;
  for (std::size_t r : rows) {
    const std::string& group = t.rows[r][std::size_t(layers)];
    if (!drawn_layers(group, key) || t.rows[r][std::size_t(b)].empty()) continue;
    const double value = io::parse_number(t, r, b);
    const double pred = optional_number(t, r, predicted, std::nan(""));
    auto& s = series[group];
    s.title = layers_title(group) + plain_text(" (95 % interval)");
    s.label = group;
    s.points.push_back({io::parse_number(t, r, step), value, optional_number(t, r, high, value) - value,
                        std::isfinite(pred) ? std::optional<double>(pred) : std::nullopt});
    if (!t.rows[r][std::size_t(band_low)].empty())
      bands.insert({io::parse_number(t, r, band_low), optional_number(t, r, band_high, INFINITY)});
  }
  if (series.empty()) return std::nullopt;
  if (bands.size() == 1) {  // one band for every judged point: shaded (else they differ: fits.csv)
    panel.band_low = bands.begin()->first;
    if (std::isfinite(bands.begin()->second)) panel.band_high = bands.begin()->second;
    panel.band_title = plain_text("agreement band");
  }
  for (auto& [group, s] : series) panel.series.push_back(std::move(s));
  return make_figure(
      stem("exponent", metric, setting),
      "The exponent b of " + metric + " ~ " + key +
          "^b at each step (the layer mean; in a depth sweep also layer 0 and the last layer): per-sample "
          "log-log least squares averaged over samples, bars the 95 % Student-t interval; dashed, the "
          "exponent the parametrization predicts (theory/scaling_exponents); shaded, the agreement band "
          "where every judged point has the same one (OUT/coord/fits.csv has each).",
      "Exponent of " + metric + " against " + key, panel);
}

}  // namespace

std::vector<Figure> coord_figures(const fs::path& out) {
  std::vector<Figure> figures;
  const fs::path lines_csv = out / "coord" / "lines.csv", fits_csv = out / "coord" / "fits.csv";
  if (!fs::exists(lines_csv) || !fs::exists(fits_csv)) return figures;
  const auto lines = as_plot_error([&] { return io::read_csv(lines_csv); });
  const auto fits = as_plot_error([&] { return io::read_csv(fits_csv); });
  const auto fit_groups = by_setting_metric(fits);
  for (const auto& [which, rows] : by_setting_metric(lines)) {
    figures.push_back(lines_figure(lines, rows, which.first, which.second));
    if (const auto it = fit_groups.find(which); it != fit_groups.end())
      if (auto f = exponent_figure(fits, it->second, which.first, which.second))
        figures.push_back(std::move(*f));
  }
  return figures;
}

}  // namespace normsim::plots
