// Layer x depth heatmaps (see heatmap_figures.hpp). Each (layer, depth) value is a filled box, not an image
// pixel, because normalized layers of different depths do not share a grid.
#include "heatmap_figures.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "grouping.hpp"
#include "line_chart.hpp"
#include "metric_labels.hpp"
#include "palette.hpp"

namespace normsim::plots {

namespace {

inline constexpr const char* heatmap_columns = "x,y,x_lo,x_hi,y_lo,y_hi,layer,depth,mean";

}  // namespace

std::vector<Figure> heatmap_figures(const ResultsFolder& folder, const std::vector<std::string>& metrics,
                                    HeatmapLayer x_axis) {
  std::vector<Figure> figures;
  const int depth_key = folder.key_index("depth");
  if (depth_key < 0) return figures;
  const auto depth_texts = key_values(folder, depth_key);
  std::vector<double> depths;
  for (const auto& d : depth_texts) depths.push_back(std::strtod(d.c_str(), nullptr));
  if (depths.size() < 2 || !std::all_of(depths.begin(), depths.end(), [](double d) { return d > 0; }))
    return figures;

  // Rows are centred on their depth on a log-2 axis and meet their neighbours at geometric midpoints.
  auto row_extent = [&](std::size_t i) {
    const double below =
        i > 0 ? std::sqrt(depths[i - 1] * depths[i]) : depths[i] / std::sqrt(depths[i + 1] / depths[i]);
    const double above = i + 1 < depths.size() ? std::sqrt(depths[i] * depths[i + 1])
                                               : depths[i] * std::sqrt(depths[i] / depths[i - 1]);
    return std::pair{below, above};
  };

  const Layout layout = choose_layout(folder, {"depth"}, true);
  std::vector<int> keys = layout.figure_keys;
  // The placement names each map even when it is the only one.
  if (std::find(keys.begin(), keys.end(), 0) == keys.end()) keys.insert(keys.begin(), 0);
  const bool placement_varies = key_values(folder, 0).size() > 1;

  for (const auto& metric : metrics) {
    const bool sublayer = is_sublayer_metric(metric);
    for (const auto& group :
         group_rows(folder, keys, [&](const SummaryRow& r) { return r.metric == metric; })) {
      std::ostringstream csv;
      csv << heatmap_columns << "\n";
      double lo = INFINITY, hi = -INFINITY, x_min = INFINITY, x_max = -INFINITY;
      for (const SummaryRow* row : group.rows) {
        const double depth = std::strtod(row->keys[std::size_t(depth_key)].c_str(), nullptr);
        const std::size_t i = value_rank(depth_texts, row->keys[std::size_t(depth_key)]);
        const auto [y_lo, y_hi] = row_extent(i);
        // Stream l sits at l/K; sublayer k spans [k/K, (k+1)/K] (centre (k+1/2)/K).
        const double scale = x_axis == HeatmapLayer::normalized ? 1.0 / depth : 1.0;
        const double centre = (row->layer + (sublayer ? 0.5 : 0.0)) * scale;
        const double x_lo = centre - 0.5 * scale, x_hi = centre + 0.5 * scale;
        csv << csv_number(centre) << ',' << csv_number(depth) << ',' << csv_number(x_lo) << ','
            << csv_number(x_hi) << ',' << csv_number(y_lo) << ',' << csv_number(y_hi) << ',' << row->layer
            << ',' << csv_number(depth) << ',' << csv_number(row->mean) << "\n";
        lo = std::min(lo, row->mean), hi = std::max(hi, row->mean);
        x_min = std::min(x_min, x_lo), x_max = std::max(x_max, x_hi);
      }
      const bool log_colour = metric_log_scale(metric) && lo > 0;

      std::ostringstream body;
      body << "set xlabel "
           << gp_text(x_axis == HeatmapLayer::normalized ? normalized_layer_axis_label(metric)
                                                         : layer_axis_label(metric))
           << "\n"
           << "set ylabel " << gp_text(depth_axis_label()) << "\n"
           << "set cblabel " << gp_text(metric_label(metric)) << " offset 1.5,0\n";
      if (log_colour) body << "set logscale cb\n" << log_axis_tics("cb", lo, hi, 5);
      body << "plot data using 1:2:3:4:5:6:9 with boxxyerror fs solid 1.0 noborder lc palette\n";

      std::ostringstream preamble;
      preamble << gp_heatmap_palette() << "unset key\n"
               << "set logscale y 2\n"
               << "set xrange [" << script_number(x_min) << ":" << script_number(x_max) << "]\n"
               << "set yrange [" << script_number(row_extent(0).first) << ":"
               << script_number(row_extent(depths.size() - 1).second) << "]\n"
               << "set ytics (";
      for (std::size_t i = 0; i < depths.size(); ++i)
        preamble << (i ? ", " : "") << "'" << depth_texts[i] << "' " << depth_texts[i];
      preamble << ")\nset colorbox\nset cbtics scale 0.5\nset tics front\n";

      Figure figure;
      std::vector<std::string> values = group.values;
      std::vector<int> named = keys;
      if (!placement_varies) named.erase(named.begin()), values.erase(values.begin());
      figure.name = "heatmap_" + file_stem_part(metric) + group_suffix(folder, named, values);
      figure.kind = "heatmap";
      const std::string where = group_caption(folder, keys, group.values);
      figure.caption = folder.metric_description(metric) + " over " +
                       (x_axis == HeatmapLayer::normalized ? "relative depth (layer / K)" : "layer") +
                       " and depth K, mean over samples; " + where +
                       (log_colour ? " (logarithmic colour scale)." : ".");
      figure.csv = csv.str();
      figure.script = {figure.name, "Layer x depth heatmap of " + metric + " (" + where + ")",
                       heatmap_columns, preamble.str(), body.str()};
      figures.push_back(std::move(figure));
    }
  }
  return figures;
}

}  // namespace normsim::plots
