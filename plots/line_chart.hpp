// Line charts: one or more panels, each with series of (x, mean +- se) and an optional dashed reference curve
// per series (theory, a fitted line, a prediction). Profiles, depth-scaling, gradient and claim figures are
// all line charts; this file turns them into one CSV and the plot commands of the script.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "text.hpp"

namespace normsim::plots {

struct ChartPoint {
  double x = 0;
  double mean = 0;
  double se = 0;
  std::optional<double> reference;  // the series' reference curve at x, if it has one there
};

struct ChartSeries {
  Text title;         // legend entry
  std::string label;  // the series' name in the CSV (commas are replaced: it is one plain field)
  std::vector<ChartPoint> points;
};

enum class ErrorStyle {
  band,  // a shaded mean +- se band under a line with points: dense x (profiles over layers)
  bars,  // error bars on points joined by a line: sparse x (depths, claims)
};

struct ChartPanel {
  Text x_label;
  Text y_label;
  bool log_x = false;
  int log_x_base = 10;  // 2 suits depths (4, 8, 16, ...)
  bool log_y = false;   // metric_log_scale for metric figures, the claim's log_y for claims
  ErrorStyle errors = ErrorStyle::band;
  bool connect = true;  // join the points of a series
  // Error bars on a log x axis: series i of n drawn at x times 1.05^(i - (n + 1)/2), so that points of
  // different series at one x (variants that agree) stay visible side by side; the CSV keeps the true x.
  bool dodge = false;
  Text reference_title;  // legend entry of the reference curves; drawn only where a series has one
  Text title;            // above the plot (e.g. a claim's verdict); empty: none
  // A shaded horizontal band of y values across the whole plot (a claim's predicted range), with its legend
  // entry; a side left empty runs to the plot's edge. No band when both are empty.
  std::optional<double> band_low, band_high;
  Text band_title;
  bool legend_below = false;  // the legend always under the plot (single panels), never beside it
  std::vector<ChartSeries> series;
};

// CSV columns: panel,series,label,x,mean,se,lo,hi,reference (lo/hi: the drawn error band or bar).
inline constexpr const char* chart_columns = "panel,series,label,x,mean,se,lo,hi,reference";

std::string chart_csv(const std::vector<ChartPanel>& panels);

// Puts `note` (what the figure leaves out; "" for nothing) on the figure, in the first panel's title, and
// at the end of its caption: dropped values are never silent.
void mark_left_out(std::vector<ChartPanel>& panels, std::string& caption, const std::string& note);

// Preamble (title arrays) and per-format body (axes, plot) for ScriptSpec. Several panels are stacked or
// sit side by side (the script's `stacked`), laid out by hand so their axes line up. The legend is outside
// every plot area, on the right (below when the first panel asks for it, or when the entries are long): the
// first panel's series, one entry for all reference curves and one for the band, in columns when there are
// more entries than fit one above the other.
std::string chart_preamble(const std::vector<ChartPanel>& panels);
// `facets`: the panels are small multiples of one metric (facets.hpp), in a grid of one column (narrow
// figures) or two, sharing one y range; each panel's title names its facet and its lines are labelled at
// their right ends; the legend below holds only the reference curve and band entries.
enum class ChartLayout { panels, facets };
std::string chart_body(const std::vector<ChartPanel>& panels, ChartLayout layout = ChartLayout::panels);

// A round tic step giving at most `most` intervals over `range` (1, 2 or 5 times a power of ten).
double nice_tic_step(double range, int most);

// Tics of a logarithmic axis ("y", "cb") over [lo, hi] (both > 0). From two decades on: whole decades, at
// most `most` labels (every 10th, 100th, ... power when there are many). Below: 1-2-5 (or finer) values,
// set explicitly with the range, so the axis always shows at least two labels (three past 0.7 decades).
inline constexpr double log_decade_tics_from = 2;
std::string log_axis_tics(const std::string& axis, double lo, double hi, int most);

// Whether a panel's y axis is drawn logarithmic: log_y, unless no value is positive (nothing to draw there;
// values <= 0 are left out of a log axis).
bool chart_log_y(const ChartPanel& panel);

}  // namespace normsim::plots
