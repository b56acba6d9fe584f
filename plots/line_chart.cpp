// Line-chart CSV and plot commands (see line_chart.hpp). The script selects each series' rows with
// ($1==panel && $2==series ? value : NaN), so one CSV in long form serves every panel and series.
#include "line_chart.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "figure.hpp"
#include "palette.hpp"

namespace normsim::plots {

namespace {

// The drawn extent of a point's uncertainty. On a log axis a band reaching zero or below is cut a decade
// under the mean, where it still says "uncertain by more than the mean" without flattening the plot.
std::pair<double, double> error_extent(const ChartPoint& p, bool log_y) {
  double lo = p.mean - p.se;
  if (log_y && lo <= 0) lo = p.mean / 10;
  return {lo, p.mean + p.se};
}

std::string csv_label(const std::string& label) {
  std::string out = label;
  std::replace(out.begin(), out.end(), ',', ';');
  std::replace(out.begin(), out.end(), '"', '\'');
  return out;
}

// Legend on the side the curves leave empty: compare the first and last thirds of the x range.
std::string key_position(const ChartPanel& panel, bool log_y) {
  double x_min = INFINITY, x_max = -INFINITY, y_min = INFINITY, y_max = -INFINITY;
  for (const auto& s : panel.series)
    for (const auto& p : s.points) {
      const double y = log_y ? std::log(p.mean) : p.mean;
      x_min = std::min(x_min, p.x), x_max = std::max(x_max, p.x);
      y_min = std::min(y_min, y), y_max = std::max(y_max, y);
    }
  if (!(x_max > x_min) || !(y_max > y_min)) return "top right";
  double left = 0, right = 0;
  int n_left = 0, n_right = 0;
  for (const auto& s : panel.series)
    for (const auto& p : s.points) {
      const double u = (p.x - x_min) / (x_max - x_min);
      const double v = ((log_y ? std::log(p.mean) : p.mean) - y_min) / (y_max - y_min);
      if (u < 1.0 / 3) left += v, ++n_left;
      if (u > 2.0 / 3) right += v, ++n_right;
    }
  const double mean_left = n_left ? left / n_left : 0.5;
  const double mean_right = n_right ? right / n_right : 0.5;
  // Curves high on the left leave the top right free, and so on.
  if (std::max(mean_left, mean_right) < 0.5) return "top right";
  return mean_left > mean_right ? "top right" : "top left";
}

std::string series_select(int panel, const std::string& column) {
  return "(($1==" + std::to_string(panel) + " && $2==i) ? $" + column + " : NaN)";
}

std::string title_array(int panel, const char* form) {
  return std::string("T") + form + std::to_string(panel);
}

}  // namespace

double nice_tic_step(double range, int most) {
  if (!(range > 0)) return 1;
  const double raw = range / most;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * decade >= raw) return m * decade;
  return 10 * decade;
}

bool chart_log_y(const ChartPanel& panel) {
  if (panel.log_y) return *panel.log_y;
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& s : panel.series)
    for (const auto& p : s.points) {
      if (!(p.mean > 0)) return false;
      lo = std::min(lo, p.mean), hi = std::max(hi, p.mean);
      if (p.reference && *p.reference > 0) lo = std::min(lo, *p.reference), hi = std::max(hi, *p.reference);
    }
  return hi > 100 * lo;
}

std::string chart_csv(const std::vector<ChartPanel>& panels) {
  std::ostringstream csv;
  csv << chart_columns << "\n";
  for (std::size_t p = 0; p < panels.size(); ++p) {
    const bool log_y = chart_log_y(panels[p]);
    for (std::size_t s = 0; s < panels[p].series.size(); ++s) {
      const auto& series = panels[p].series[s];
      for (const auto& point : series.points) {
        const auto [lo, hi] = error_extent(point, log_y);
        csv << p + 1 << ',' << s + 1 << ',' << csv_label(series.label) << ',' << csv_number(point.x) << ','
            << csv_number(point.mean) << ',' << csv_number(point.se) << ',' << csv_number(lo) << ','
            << csv_number(hi) << ',' << (point.reference ? csv_number(*point.reference) : "") << "\n";
      }
    }
  }
  return csv.str();
}

std::string chart_preamble(const std::vector<ChartPanel>& panels) {
  std::ostringstream gp;
  gp << "# Legend titles of panel p's series i: TE<p>[i] (enhanced text), TT<p>[i] (LaTeX).\n";
  for (std::size_t p = 0; p < panels.size(); ++p) {
    const auto& series = panels[p].series;
    for (const char* form : {"E", "T"}) {
      gp << "array " << title_array(static_cast<int>(p + 1), form) << "["
         << std::max<std::size_t>(series.size(), 1) << "] = [";
      for (std::size_t s = 0; s < series.size(); ++s)
        gp << (s ? ", " : "") << gp_quote(form[0] == 'E' ? series[s].title.enhanced : series[s].title.latex);
      if (series.empty()) gp << "''";
      gp << "]\n";
    }
  }
  return gp.str();
}

std::string chart_body(const std::vector<ChartPanel>& panels) {
  std::ostringstream gp;
  const bool multi = panels.size() > 1;
  // Margins in character units: the same for every panel, so stacked axes line up, and gnuplot still
  // places the axis labels itself.
  if (multi)
    gp << "if (stacked) { set multiplot layout " << panels.size() << ",1 } else { set multiplot layout 1,"
       << panels.size() << " }\nset lmargin 9; set rmargin 2; set tmargin 0.8; set bmargin 3.2\n";
  for (std::size_t index = 0; index < panels.size(); ++index) {
    const ChartPanel& panel = panels[index];
    const int p = static_cast<int>(index + 1);
    const int n = static_cast<int>(panel.series.size());
    const bool log_y = chart_log_y(panel);
    bool any_reference = false;
    std::size_t most_points = 1;
    for (const auto& s : panel.series) {
      most_points = std::max(most_points, s.points.size());
      for (const auto& point : s.points) any_reference |= point.reference.has_value();
    }
    if (multi) gp << "# panel " << p << "\n";
    gp << "unset logscale\nset offsets 0, 0, 0, 0\n";
    if (!panel.log_x) {
      // Small panels crowd gnuplot's automatic tics: at most five intervals.
      double x_min = INFINITY, x_max = -INFINITY;
      for (const auto& s : panel.series)
        for (const auto& point : s.points) x_min = std::min(x_min, point.x), x_max = std::max(x_max, point.x);
      if (multi && x_max > x_min)
        gp << "set xtics " << csv_number(nice_tic_step(x_max - x_min, 5)) << "\n";
      else
        gp << "set xtics autofreq\n";
    }
    if (multi && !log_y) {
      double y_min = INFINITY, y_max = -INFINITY;
      for (const auto& s : panel.series)
        for (const auto& point : s.points) {
          const auto [lo, hi] = error_extent(point, false);
          y_min = std::min(y_min, lo), y_max = std::max(y_max, hi);
        }
      if (y_max > y_min) gp << "set ytics " << csv_number(nice_tic_step(y_max - y_min, 4)) << "\n";
    } else {
      gp << "set ytics autofreq\n";
    }
    gp << "set format x (tex ? '$%g$' : '%g')\nset format y (tex ? '$%g$' : '%g')\n";
    gp << "set xlabel " << gp_text(panel.x_label) << "\n";
    gp << "set ylabel " << gp_text(panel.y_label) << "\n";
    if (panel.log_x) gp << "set logscale x " << panel.log_x_base << "\n";
    if (panel.log_x && panel.log_x_base == 10) gp << "set format x (tex ? '$10^{%T}$' : '10^{%T}')\n";
    if (log_y) gp << "set logscale y\nset format y (tex ? '$10^{%T}$' : '10^{%T}')\n";
    // A band reaches the plot's sides; error bars would sit on them.
    // (On a log axis gnuplot would round the range out to whole decades: fix it to the data instead.)
    if (panel.errors == ErrorStyle::band)
      gp << "set autoscale xfix\n";
    else if (panel.log_x)
      gp << "set autoscale xfix\nset offsets graph 0.05, graph 0.05, 0, 0\n";
    else
      gp << "set autoscale x\nset offsets graph 0.03, graph 0.03, 0, 0\n";
    if (index == 0)
      gp << "set key " << key_position(panel, log_y) << "\n";
    else
      gp << "unset key\n";
    // Points on every line would hide the line on deep profiles: mark about ten per series.
    const std::size_t interval = std::max<std::size_t>(1, most_points / 10);
    const std::string te = title_array(p, "E"), tt = title_array(p, "T");
    const std::string n_text = std::to_string(n);
    gp << "plot ";
    if (panel.errors == ErrorStyle::band) {
      gp << "for [i=1:" << n_text << "] data using 4:" << series_select(p, "7") << ":"
         << series_select(p, "8") << " with filledcurves fs transparent solid 0.18 noborder lt i, \\\n     ";
      gp << "for [i=1:" << n_text << "] data using 4:" << series_select(p, "5") << " with "
         << (panel.connect ? "linespoints pi " + std::to_string(interval) : std::string("points"))
         << " lt i title (tex ? " << tt << "[i] : " << te << "[i])";
    } else {
      gp << "for [i=1:" << n_text << "] data using 4:" << series_select(p, "5") << ":7:8 with "
         << (panel.connect ? "yerrorlines" : "yerrorbars") << " lt i title (tex ? " << tt << "[i] : " << te
         << "[i])";
    }
    if (any_reference) {
      gp << ", \\\n     for [i=1:" << n_text << "] data using 4:" << series_select(p, "9")
         << " with lines lt i dt " << reference_dash << " lw 1.2";
      gp << ", \\\n     keyentry with lines lc rgb 'black' dt " << reference_dash << " lw 1.2 title "
         << gp_text(panel.reference_title);
    }
    gp << "\n";
  }
  if (multi) gp << "unset multiplot\n";
  return gp.str();
}

}  // namespace normsim::plots
