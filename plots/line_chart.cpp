// Line-chart CSV and plot commands (see line_chart.hpp). The script selects each series' rows with
// ($1==panel && $2==series ? value : NaN), so one CSV in long form serves every panel and series.
#include "line_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

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

std::string series_select(int panel, const std::string& column) {
  return "(($1==" + std::to_string(panel) + " && $2==i) ? $" + column + " : NaN)";
}

std::string title_array(int panel, const char* form) {
  return std::string("T") + form + std::to_string(panel);
}

bool finite(const std::optional<double>& side) {
  return side && std::isfinite(*side);
}

bool has_band(const ChartPanel& panel) {
  return finite(panel.band_low) || finite(panel.band_high);
}

// The band's fill: a light grey under everything, distinct from every series colour.
constexpr const char* band_colour = "#999999";
constexpr const char* band_fill = "fs transparent solid 0.22 noborder";

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
  if (!panel.log_y) return false;
  for (const auto& s : panel.series)
    for (const auto& p : s.points)
      if (p.mean > 0) return true;
  return false;
}

void mark_left_out(std::vector<ChartPanel>& panels, std::string& caption, const std::string& note) {
  if (note.empty() || panels.empty()) return;
  Text& title = panels.front().title;
  const Text added = plain_text(note);
  title.enhanced += (title.enhanced.empty() ? "" : " - ") + added.enhanced;
  title.latex += (title.latex.empty() ? "" : " -- ") + added.latex;
  caption += " Left out: " + note + ".";
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

namespace {

// The extent of a panel's data as drawn: points with their error bars or bands, and reference curves.
struct Extent {
  double x_min = INFINITY, x_max = -INFINITY, y_min = INFINITY, y_max = -INFINITY;
  bool integer_x = true;
  std::vector<double> xs;  // distinct x values, sorted
};

Extent panel_extent(const ChartPanel& panel, bool log_y) {
  Extent e;
  for (const auto& s : panel.series)
    for (const auto& p : s.points) {
      const auto [lo, hi] = error_extent(p, log_y);
      e.x_min = std::min(e.x_min, p.x), e.x_max = std::max(e.x_max, p.x);
      if (!log_y || p.mean > 0)  // a log axis leaves values <= 0 out
        e.y_min = std::min({e.y_min, lo, p.mean}), e.y_max = std::max({e.y_max, hi, p.mean});
      if (p.reference && (!log_y || *p.reference > 0))
        e.y_min = std::min(e.y_min, *p.reference), e.y_max = std::max(e.y_max, *p.reference);
      e.integer_x &= p.x == std::round(p.x);
      e.xs.push_back(p.x);
    }
  // The band's finite sides are part of the picture: the y range shows them.
  for (const auto& side : {panel.band_low, panel.band_high})
    if (side && std::isfinite(*side) && (!log_y || *side > 0) && !e.xs.empty())
      e.y_min = std::min(e.y_min, *side), e.y_max = std::max(e.y_max, *side);
  // A one-sided band that the data do not reach would lie wholly outside the range: show a tenth of it.
  const bool low_only = finite(panel.band_low) && !finite(panel.band_high),
             high_only = finite(panel.band_high) && !finite(panel.band_low);
  if ((low_only || high_only) && e.y_max > e.y_min && (!log_y || e.y_min > 0)) {
    const double tenth = log_y ? std::pow(e.y_max / e.y_min, 0.1) : 0.1 * (e.y_max - e.y_min);
    if (low_only && e.y_max <= *panel.band_low) e.y_max = log_y ? e.y_max * tenth : e.y_max + tenth;
    if (high_only && e.y_min >= *panel.band_high) e.y_min = log_y ? e.y_min / tenth : e.y_min - tenth;
  }
  std::sort(e.xs.begin(), e.xs.end());
  e.xs.erase(std::unique(e.xs.begin(), e.xs.end()), e.xs.end());
  return e;
}

// Characters a legend entry takes when drawn: enhanced-text markup ({/:Italic ...}, braces, ^, _ and
// escapes) takes none, and a UTF-8 sequence is one character.
std::size_t visible_length(const std::string& enhanced) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < enhanced.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(enhanced[i]);
    if (c == '{' && i + 1 < enhanced.size() && enhanced[i + 1] == '/') {
      while (i < enhanced.size() && enhanced[i] != ' ') ++i;  // the font switch up to its space
    } else if (c == '\\' && i + 1 < enhanced.size()) {
      ++i, ++n;
    } else if (c != '{' && c != '}' && c != '^' && c != '_' && (c & 0xC0) != 0x80) {
      ++n;
    }
  }
  return n;
}

}  // namespace

std::string log_axis_tics(const std::string& axis, double lo, double hi, int most) {
  std::ostringstream gp;
  double decades = std::log10(hi / lo);
  if (decades >= log_decade_tics_from) {
    // Every `step`-th of the whole decades inside the range, at most `most` intervals between them, counted
    // from the decades that are there (1.5 to 3e5 holds 10^1..10^5, four intervals: step 1; taking
    // ceil(5.3 / 5) = 2 from the span left that colour bar with two labels).
    const int intervals = int(std::floor(std::log10(hi))) - int(std::ceil(std::log10(lo)));
    const int step = std::max(1, (intervals + most - 1) / most);
    // The labels are listed, every `step` decades: gnuplot 5.4 never finishes a log axis given a tic
    // increment of 10^9 or more (seen at 1 to 1e72), and its minor tics would number 10^step - 1 per label.
    gp << "set " << axis << "tics (";
    const int first = int(std::ceil(std::log10(lo) / step)) * step, last = int(std::floor(std::log10(hi)));
    for (int e = first; e <= last; e += step) gp << (e == first ? "" : ", ") << "1e" << e;
    gp << ")\nset format " << axis << " (tex ? '$10^{%T}$' : '10^{%T}')\n";
    if (step > 1) gp << "set m" << axis << "tics 1\n";
    return gp.str();
  }
  // Pad by 5% of the span (at least a fifth of a decade in all) so the points do not sit on the border.
  const double pad = std::max(0.05 * decades, (0.2 - decades) / 2);
  lo /= std::pow(10.0, pad), hi *= std::pow(10.0, pad);
  std::vector<double> tics;
  for (const std::vector<double>& mantissas :
       std::vector<std::vector<double>>{{1}, {1, 2, 5}, {1, 2, 3, 5, 7}}) {
    tics.clear();
    for (int e = int(std::floor(std::log10(lo))); e <= int(std::ceil(std::log10(hi))); ++e)
      for (double m : mantissas) {
        const double v = m * std::pow(10.0, e);
        if (v >= lo && v <= hi) tics.push_back(v);
      }
    // The coarsest set with three labels: finer ones crowd a log axis, and two (0.76 to 2 labelled only 1
    // and 2) leave a colour bar's values to be guessed (issue 30).
    if (tics.size() >= 3) break;
  }
  // A range of less than about half a decade: evenly spaced values, the coarsest step that gives three.
  for (int intervals = 4; tics.size() < 3 && intervals <= 16; intervals *= 2) {
    tics.clear();
    const double step = nice_tic_step(hi - lo, intervals);
    for (double v = std::ceil(lo / step) * step; v <= hi; v += step) tics.push_back(v);
  }
  gp << "set " << axis << "range [" << script_number(lo) << ":" << script_number(hi) << "]\nset " << axis
     << "tics (";
  for (std::size_t i = 0; i < tics.size(); ++i) gp << (i ? ", " : "") << script_number(tics[i]);
  gp << ")\nset m" << axis << "tics default\n";
  return gp.str();
}

namespace {

// The longest y tic label of a panel, in characters (for the shared left margin of stacked panels).
std::size_t y_tic_chars(const ChartPanel& panel) {
  const bool log_y = chart_log_y(panel);
  const Extent e = panel_extent(panel, log_y);
  if (!(e.y_max > e.y_min)) return 3;
  if (log_y) return e.y_max / e.y_min >= 10 ? 4 : 5;  // 10^{-4} reads as four characters; 1-2-5 values
  const double step = nice_tic_step(e.y_max - e.y_min, 4);
  std::size_t chars = 1;
  for (double v = std::floor(e.y_min / step) * step; v <= e.y_max + step; v += step) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%g", std::abs(v) < step / 2 ? 0.0 : v);
    chars = std::max(chars, std::string(buffer).size());
  }
  return chars;
}

// A y label longer than this (in characters) would run past a one-column plot's height: two lines.
constexpr std::size_t y_label_chars = 22;

// gp_text, with the enhanced form broken at the space nearest its middle when it is longer than `most`
// characters (0: always) and holds no markup that a break could cut ({...}). The LaTeX form is kept whole:
// LaTeX sets it.
// Where gp_text_wrapped breaks `text`: the space nearest the middle, or npos when it stays one line.
std::size_t wrap_point(const Text& text, std::size_t most) {
  const std::string& e = text.enhanced;
  if (visible_length(e) <= most || e.find('{') != std::string::npos) return std::string::npos;
  std::size_t best = std::string::npos;
  for (std::size_t i = e.find(' '); i != std::string::npos; i = e.find(' ', i + 1))
    if (best == std::string::npos ||
        std::abs(double(i) - e.size() / 2.0) < std::abs(double(best) - e.size() / 2.0))
      best = i;
  return best;
}

std::string gp_text_wrapped(const Text& text, std::size_t most) {
  const std::string& e = text.enhanced;
  const std::size_t best = wrap_point(text, most);
  if (best == std::string::npos) return gp_text(text);
  return "(tex ? " + gp_quote(text.latex) + " : " + gp_quote(e.substr(0, best)) + ".\"\\n\"." +
         gp_quote(e.substr(best + 1)) + ")";
}

// The y label's offset: a label gp_text_wrapped breaks in two moves left by a line, because gnuplot sizes
// the left margin for one line of a rotated label and would set the second over the tic labels.
std::string y_label_offset(const Text& text) {
  return wrap_point(text, y_label_chars) != std::string::npos ? " offset (tex ? 0 : -1.2), 0" : "";
}

// The y range every facet shares, so small multiples compare at a glance: linear out to whole tic steps,
// log out to whole decades (or padded within one, as log_axis_tics pads).
std::pair<double, double> facet_y_range(const Extent& e, bool log_y) {
  if (!(e.y_max > e.y_min)) return {e.y_min - 1, e.y_max + 1};
  if (!log_y) {
    const double step = nice_tic_step(e.y_max - e.y_min, 4);
    return {std::floor(e.y_min / step) * step, std::ceil(e.y_max / step) * step};
  }
  const double decades = std::log10(e.y_max / e.y_min);
  if (decades >= log_decade_tics_from)
    return {std::pow(10.0, std::floor(std::log10(e.y_min))), std::pow(10.0, std::ceil(std::log10(e.y_max)))};
  const double pad = std::max(0.05 * decades, (0.2 - decades) / 2);
  return {e.y_min / std::pow(10.0, pad), e.y_max * std::pow(10.0, pad)};
}

// A facet's cell in a grid of one column (narrow figures, the script's `stacked`) or two, with its title
// above and room on the right for the direct labels (`label_chars` characters of legend text, one point
// smaller than the margin's unit, plus the offset).
std::string facet_cell(std::size_t index, std::size_t n_panels, std::size_t tic_chars,
                       std::size_t label_chars, const std::string& title) {
  std::ostringstream gp;
  gp << "# facet " << index + 1 << ": its cell of the grid, margins in characters so the axes line up\n"
     << "facet_cols = stacked ? 1 : 2; facet_rows = ceil(" << n_panels << ".0/facet_cols)\n"
     << "facet_col = " << index << " % facet_cols; facet_row = floor(" << index << ".0/facet_cols)\n"
     << "set origin facet_col*1.0/facet_cols, key_h + (1 - key_h)*(facet_rows - 1 - facet_row)/facet_rows\n"
     << "set size 1.0/facet_cols, (1 - key_h)/facet_rows\n"
     << "set lmargin " << tic_chars + 5 << "; set rmargin " << std::ceil(label_chars * 0.8) + 2
     << "; set tmargin 1.4; set bmargin (facet_row < facet_rows - 1 ? 1.6 : 3.4)\n"
     << "unset label\nset label 1 " << gp_quote(title)
     << " at graph 0, graph 1 offset 0, 0.7 left font keyfont\n";
  return gp.str();
}

// The series' names at the right ends of their lines, in their colours, moved apart so no two overlap (a
// label is key_row_in tall; the plot's height follows from the cell, so edits of height_in keep them apart).
std::string direct_labels(const ChartPanel& panel, int p, std::pair<double, double> y_range, bool log_y) {
  std::vector<std::pair<double, int>> ends;  // (fraction of the y range, series number)
  for (std::size_t s = 0; s < panel.series.size(); ++s) {
    const auto& points = panel.series[s].points;
    if (points.empty()) continue;
    const double y = points.back().mean;
    double f = 0;  // a value <= 0 on a log axis: named at the bottom edge, below everything drawn
    if (!log_y)
      f = (y - y_range.first) / (y_range.second - y_range.first);
    else if (y > 0)
      f = std::log(y / y_range.first) / std::log(y_range.second / y_range.first);
    ends.push_back({std::clamp(f, 0.0, 1.0), static_cast<int>(s + 1)});
  }
  if (ends.empty()) return "";
  std::sort(ends.begin(), ends.end());
  const std::size_t n = ends.size();
  std::ostringstream gp;
  gp << "array LY[" << n << "] = [";
  for (std::size_t k = 0; k < n; ++k) gp << (k ? ", " : "") << script_number(ends[k].first);
  gp << "]\narray LI[" << n << "] = [";
  for (std::size_t k = 0; k < n; ++k) gp << (k ? ", " : "") << ends[k].second;
  gp << "]\n"
     << "label_gap = key_row_in/(height_in*(1 - key_h)/facet_rows - 4.4*fontsize/72.0)\n"
     // Spread upwards, move the run back down so its centre stays where the line ends were, then keep
     // it inside the plot: up from the bottom, down from the top.
     << "label_sum = 0; do for [k=1:" << n << "] { label_sum = label_sum + LY[k] }\n"
     << "do for [k=2:" << n << "] { if (LY[k] < LY[k-1] + label_gap) { LY[k] = LY[k-1] + label_gap } }\n"
     << "do for [k=1:" << n << "] { label_sum = label_sum - LY[k] }\n"
     << "do for [k=1:" << n << "] { LY[k] = LY[k] + label_sum/" << n << ".0 }\n"
     << "if (LY[1] < 0) { LY[1] = 0 }\n"
     << "do for [k=2:" << n << "] { if (LY[k] < LY[k-1] + label_gap) { LY[k] = LY[k-1] + label_gap } }\n"
     << "if (LY[" << n << "] > 1) { LY[" << n << "] = 1; do for [k=" << n
     << "-1:1:-1] { if (LY[k] > LY[k+1] - label_gap) { LY[k] = LY[k+1] - label_gap } } }\n"
     << "do for [k=1:" << n << "] { set label (100 + k) (tex ? " << title_array(p, "T")
     << "[LI[k]] : " << title_array(p, "E")
     << "[LI[k]]) at graph 1, graph LY[k] offset 0.8, 0 left textcolor lt LI[k] "
     << "font keyfont }\n";
  return gp.str();
}

}  // namespace

std::string chart_body(const std::vector<ChartPanel>& panels, ChartLayout layout) {
  std::ostringstream gp;
  const std::size_t n_panels = panels.size();
  const bool facets = layout == ChartLayout::facets;
  const bool multi = n_panels > 1 || facets;

  // The key (legend) sits outside every plot area, right of it, so it never covers data or tic labels: the
  // series of the first panel (the panels share them) and one entry for all the reference curves.
  bool any_reference = false;
  std::size_t key_chars = 0;
  bool any_title = false;
  for (const auto& panel : panels)
    for (const auto& s : panel.series)
      for (const auto& point : s.points) any_reference |= point.reference.has_value();
  if (!panels.empty() && !facets)
    for (const auto& s : panels.front().series) {
      key_chars = std::max(key_chars, visible_length(s.title.enhanced));
      any_title |= !s.title.enhanced.empty();
    }
  if (any_reference && !panels.empty()) {
    key_chars = std::max(key_chars, visible_length(panels.front().reference_title.enhanced));
    any_title |= !panels.front().reference_title.enhanced.empty();
  }
  const bool band_entry = !panels.empty() && has_band(panels.front());
  if (band_entry) {
    key_chars = std::max(key_chars, visible_length(panels.front().band_title.enhanced));
    any_title |= !panels.front().band_title.enhanced.empty();
  }
  const bool key = any_title;
  // A reference known at a single x (a claim with one point) is a cross in the series' colour.
  std::size_t longest = 0;
  for (const auto& panel : panels)
    for (const auto& s : panel.series) longest = std::max(longest, s.points.size());
  const std::string reference_style =
      (longest == 1 ? std::string("points pt 2 ps 1.5 lw 1.5")
                    : "lines dt " + std::string(reference_dash) + " lw " + reference_width) +
      " lc rgb '" + reference_colour + "'";
  const std::string key_style = "vertical Left reverse samplen 1.5 spacing 0.95 width -1 font keyfont";
  // Each format is drawn in turn: undo what the previous one's legend plot changed.
  gp << "set origin 0, 0; set size 1, 1; set lmargin -1; set rmargin -1; set tmargin -1; set bmargin -1\n"
     << "set border 3 lw 1; set tics nomirror out scale 0.6; unset label 1\n"
     << "keyfont = sprintf('%s,%g', font, fontsize - 1)  # the legend's text is one point smaller\n";

  // The legend's place, computed by the script from the font size and figure size (so editing width_in,
  // height_in or fontsize keeps it clear of the plots): a column on the right when its entries are short,
  // else a row of columns at the bottom (always under stacked panels). The plots get the rest.
  const std::size_t series_entries = panels.empty() || facets ? 0 : panels.front().series.size();
  const std::size_t entries = series_entries + (any_reference ? 1 : 0) + (band_entry ? 1 : 0);
  const bool always_below = multi ? false : !panels.empty() && panels.front().legend_below;
  // An entry is its sample (1.5 characters), gaps and its text (about 0.55 em a character in Liberation
  // Sans). A legend never takes more than a fifth of the figure's width (beside) or height (below); figures
  // with more than six series are split into facets first (facets.hpp), so six entries always fit.
  gp << "key_n = " << (key ? entries : 0) << "; key_entry_in = (" << key_chars
     << "*0.55 + 3.5)*(fontsize - 1)/72.0; key_row_in = 1.3*(fontsize - 1)/72.0  # inches\n"
     << "key_fit = floor((height_in - 0.3)/key_row_in); key_fit = key_fit < 1 ? 1 : key_fit\n"
     << "key_below = "
     << (facets  ? "1 || "
         : multi ? "stacked || "
                 : "")
     << (always_below ? "1 || " : "") << "ceil(key_n*1.0/key_fit)*key_entry_in > 0.2*width_in\n"
     << "if (key_below) {\n"
     << "  key_cols = floor(width_in/key_entry_in); key_cols = key_cols < 1 ? 1 : key_cols\n"
     // 0.0, not 0: gnuplot divides integers as integers, and (1 - key_h)/3 would be 0.
     << "  key_rows = ceil(key_n*1.0/key_cols); key_h = key_n > 0 ? (key_rows*key_row_in + 0.08)/height_in : "
        "0.0;"
        " key_w = 0.0\n"
     << "} else {\n"
     << "  key_cols = ceil(key_n*1.0/key_fit); key_rows = key_cols > 0 ? ceil(key_n*1.0/key_cols) : 0\n"
     << "  key_w = key_cols*key_entry_in/width_in; key_h = 0.0\n"
     << "}\n";
  // The legend is a plot of its own beside the charts (a legend inside a chart is limited to its height).
  gp << "set multiplot\n";
  if (!multi) gp << "set origin 0, key_h; set size 1 - key_w, 1 - key_h\n";
  // Stacked panels share one left margin, wide enough for the longest tic label of any of them.
  std::size_t tic_chars = 3;
  for (const auto& panel : panels) tic_chars = std::max(tic_chars, y_tic_chars(panel));
  // Facets share one y range and label their lines directly (room for the longest name on the right).
  Extent shared;
  std::size_t label_chars = 0;
  for (const auto& panel : panels) {
    const Extent e = panel_extent(panel, chart_log_y(panel));
    shared.y_min = std::min(shared.y_min, e.y_min), shared.y_max = std::max(shared.y_max, e.y_max);
    for (const auto& s : panel.series) label_chars = std::max(label_chars, visible_length(s.title.enhanced));
  }
  for (std::size_t index = 0; index < n_panels; ++index) {
    const ChartPanel& panel = panels[index];
    const int p = static_cast<int>(index + 1);
    const int n = static_cast<int>(panel.series.size());
    const bool log_y = chart_log_y(panel);
    Extent extent = panel_extent(panel, log_y);
    if (facets) extent.y_min = shared.y_min, extent.y_max = shared.y_max;
    bool has_reference = false;
    std::size_t most_points = 1;
    for (const auto& s : panel.series) {
      most_points = std::max(most_points, s.points.size());
      for (const auto& point : s.points) has_reference |= point.reference.has_value();
    }
    if (facets) {
      gp << facet_cell(index, n_panels, tic_chars, label_chars, panel.title.enhanced);
    } else if (multi) {
      const std::string i = std::to_string(index), n_text = std::to_string(n_panels);
      gp << "# panel " << p << ": its cell of the figure, with margins in characters so the axes line up\n"
         << "if (stacked) {\n"
         << "  set origin 0, key_h + (1 - key_h)*" << n_panels - index - 1 << ".0/" << n_text
         << "; set size 1 - key_w, (1 - key_h)/" << n_text << "; set lmargin " << tic_chars + 5 << "\n"
         << "} else {\n"
         << "  set origin " << i << "*(1 - key_w)/" << n_text << ", key_h; set size (1 - key_w)/" << n_text
         << ", 1 - key_h; set lmargin " << y_tic_chars(panel) + 5 << "\n"
         << "}\n"
         << "set rmargin 2; set tmargin 0.8; set bmargin 3.2\n";
    }
    gp << "unset logscale\nset offsets 0, 0, 0, 0\nset xrange [*:*]\nset yrange [*:*]\nunset object 1\n";
    // The band: a shaded rectangle behind the data across the plot's width, from band_low to band_high
    // (a missing side: the plot's edge).
    if (has_band(panel)) {
      const auto side = [](const std::optional<double>& v, const char* edge) {
        return v && std::isfinite(*v) ? "first " + script_number(*v) : std::string(edge);
      };
      gp << "set object 1 rect from graph 0, " << side(panel.band_low, "graph 0") << " to graph 1, "
         << side(panel.band_high, "graph 1") << " behind fc rgb '" << band_colour << "' " << band_fill
         << "\n";
    }
    // A title (a claim's verdict) is a line across the top of the figure, left-aligned: centred over a plot
    // narrowed by the legend it would run off the figure.
    if (!panel.title.enhanced.empty() && !multi) {
      // Wider than the figure (the estimate takes a character as 0.66 em): two lines, and a taller margin.
      const std::string at = " at screen 0.02, screen 1 - 0.9*fontsize/72.0/height_in left font keyfont";
      gp << "if (" << visible_length(panel.title.enhanced) << "*0.66*(fontsize - 1)/72.0 > 0.96*width_in) {\n"
         << "  set label 1 " << gp_text_wrapped(panel.title, 0) << at << "; set tmargin 3.4\n"
         << "} else {\n"
         << "  set label 1 " << gp_text(panel.title) << at << "; set tmargin 2.2\n"
         << "}\n";
    } else if (!facets)
      gp << "unset label 1\n";
    gp << "set format x (tex ? '$%g$' : '%g')\nset format y (tex ? '$%g$' : '%g')\n";

    // x tics: on a log axis the values themselves (the swept depths) when there are few, else decades; on a
    // linear axis a round step giving at most five intervals (whole layers on layer axes).
    if (panel.log_x) {
      gp << "set logscale x " << panel.log_x_base << "\n";
      if (extent.xs.size() == 1 && extent.xs.front() > 0) {  // one x: the middle of a factor-2 range
        const double x = extent.xs.front();
        gp << "set xrange [" << script_number(x / std::sqrt(2.0)) << ":" << script_number(x * std::sqrt(2.0))
           << "]\n";
      }
      if (!extent.xs.empty() && extent.xs.size() <= 8) {
        gp << "set xtics (";
        for (std::size_t i = 0; i < extent.xs.size(); ++i)
          gp << (i ? ", " : "") << script_number(extent.xs[i]);
        gp << ")\nset mxtics default\n";
      } else {
        gp << "set xtics autofreq\n";
        if (panel.log_x_base == 10) gp << "set format x (tex ? '$10^{%T}$' : '10^{%T}')\n";
      }
    } else if (extent.xs.size() == 1) {  // one x: that value alone, in the middle of a range around it
      const double x = extent.xs.front(), half = x == 0 ? 1 : std::abs(x) / 4;
      gp << "set xtics (" << script_number(x) << ")\nset xrange [" << script_number(x - half) << ":"
         << script_number(x + half) << "]\n";
    } else if (extent.x_max > extent.x_min) {
      // Side-by-side panels are narrow: at most two intervals there.
      const auto step = [&](int most) {
        const double s = nice_tic_step(extent.x_max - extent.x_min, most);
        return script_number(extent.integer_x ? std::max(s, 1.0) : s);
      };
      if (multi && !facets)  // facets are at least 3.5 in wide
        gp << "if (stacked) { set xtics " << step(5) << " } else { set xtics " << step(2) << " }\n";
      else
        gp << "set xtics " << step(5) << "\n";
    } else {
      gp << "set xtics autofreq\n";
    }
    // y tics: see log_axis_tics; linear axes get a round step with at most four (panels) or five intervals.
    if (log_y) {
      gp << "set logscale y\n";
      if (extent.y_max > 0 && extent.y_min > 0)
        gp << log_axis_tics("y", extent.y_min, extent.y_max, multi ? 4 : 5);
      else
        gp << "set ytics autofreq\nset format y (tex ? '$10^{%T}$' : '10^{%T}')\n";
      // gnuplot autoscales to the data only: a band reaching past it needs the range set (whole decades).
      if (has_band(panel) && extent.y_min > 0 && extent.y_max / extent.y_min >= 10)
        gp << "set yrange [" << script_number(std::pow(10.0, std::floor(std::log10(extent.y_min)))) << ":"
           << script_number(std::pow(10.0, std::ceil(std::log10(extent.y_max)))) << "]\n";
    } else if (extent.y_max > extent.y_min) {
      const double step = nice_tic_step(extent.y_max - extent.y_min, multi ? 4 : 5);
      gp << "set ytics " << script_number(step) << "\n";
      if (has_band(panel))  // as above, out to whole tic steps as gnuplot's autoscaling would
        gp << "set yrange [" << script_number(std::floor(extent.y_min / step) * step) << ":"
           << script_number(std::ceil(extent.y_max / step) * step) << "]\n";
    } else {
      gp << "set ytics autofreq\n";
    }
    if (facets && log_y == chart_log_y(panels.front())) {
      const auto range = facet_y_range(shared, log_y);
      gp << "set yrange [" << script_number(range.first) << ":" << script_number(range.second) << "]\n"
         << direct_labels(panel, p, range, log_y);
    }
    gp << "set xtics nomirror out scale 0.6; set ytics nomirror out scale 0.6\n";
    if (facets)  // the x label once, under the bottom row
      gp << "set xlabel (facet_row < facet_rows - 1 ? '' : " << gp_text(panel.x_label) << ")\n";
    else
      gp << "set xlabel " << gp_text(panel.x_label) << "\n";
    if (facets)  // the facets share one metric: its label once, left of the middle row (stacked, labels
                 // collide)
      gp << "set ylabel (facet_col > 0 || facet_row != floor((facet_rows - 1)/2.0) ? '' : "
         << gp_text_wrapped(panel.y_label, y_label_chars) << ")" << y_label_offset(panel.y_label) << "\n";
    else
      gp << "set ylabel " << gp_text_wrapped(panel.y_label, y_label_chars) << y_label_offset(panel.y_label)
         << "\n";
    // A band reaches the plot's sides; error bars would sit on them.
    // (On a log axis gnuplot would round the range out to whole decades: fix it to the data instead.)
    // One x has its range set above (autoscaling would put the point on the axis or shrink the range to it).
    if (extent.xs.size() != 1) {
      if (panel.errors == ErrorStyle::band)
        gp << "set autoscale xfix\n";
      else if (panel.log_x)
        gp << "set autoscale xfix\nset offsets graph 0.05, graph 0.05, 0, 0\n";
      else
        gp << "set autoscale x\nset offsets graph 0.03, graph 0.03, 0, 0\n";
    }
    gp << "unset key\n";

    // Points on every line would hide the line on deep profiles: mark about ten per series.
    const std::size_t interval = std::max<std::size_t>(1, most_points / 10);
    const std::string te = title_array(p, "E"), tt = title_array(p, "T");
    const std::string n_text = std::to_string(n);
    gp << "plot ";
    if (panel.errors == ErrorStyle::band)
      gp << "for [i=1:" << n_text << "] data using 4:" << series_select(p, "7") << ":"
         << series_select(p, "8") << " with filledcurves fs transparent solid 0.18 noborder lt i, \\\n     ";
    // Reference curves behind the data, thin and grey (see reference_dash): the legend's swatch is drawn
    // in the same style.
    if (has_reference)
      gp << "for [i=1:" << n_text << "] data using 4:" << series_select(p, "9") << " with " << reference_style
         << ", \\\n     ";
    if (panel.errors == ErrorStyle::band) {
      gp << "for [i=1:" << n_text << "] data using 4:" << series_select(p, "5") << " with "
         << (panel.connect ? "linespoints pi " + std::to_string(interval) : std::string("points"))
         << " lt i title (tex ? " << tt << "[i] : " << te << "[i])";
    } else {
      const std::string x = panel.dodge && panel.log_x ? "($4*1.05**(i-(" + n_text + "+1)/2.0))" : "4";
      gp << "for [i=1:" << n_text << "] data using " << x << ":" << series_select(p, "5") << ":7:8 with "
         << (panel.connect ? "yerrorlines" : "yerrorbars") << " lt i title (tex ? " << tt << "[i] : " << te
         << "[i])";
    }
    gp << "\n";
  }
  if (key) {
    // The legend's own plot: no axes, only the entries of the first panel's series and the reference.
    const ChartPanel& first = panels.front();
    const std::string style = first.connect ? "linespoints" : "points";
    const bool titled =
        std::any_of(panels.begin(), panels.end(), [](auto& p) { return !p.title.enhanced.empty(); });
    gp << "# the legend (keyentry: an entry without data; the NaN plot draws nothing)\n"
       << "if (key_below) { set origin 0, 0; set size 1, key_h } else { set origin 1 - key_w, 0; set size "
          "key_w, 1 "
          "}\n"
       << "set lmargin 0; set rmargin 0; set tmargin " << (titled && !multi ? "(key_below ? 0 : 2.2)" : "0")
       << "; set bmargin 0\n"
       << "unset logscale; unset label; unset object 1; unset xlabel; unset ylabel; unset tics; unset "
          "border\n"
       << "set xrange [0:1]; set yrange [0:1]\n"
       << "set key inside left top " << key_style << " maxrows key_rows\n"
       << "plot NaN notitle";
    if (series_entries > 0)
      gp << ", for [i=1:" << series_entries << "] keyentry with " << style
         << " lt i title (tex ? TT1[i] : TE1[i])";
    if (any_reference)
      gp << ", \\\n     keyentry with " << reference_style << " title " << gp_text(first.reference_title);
    if (band_entry)
      gp << ", \\\n     keyentry with boxes fc rgb '" << band_colour << "' " << band_fill << " title "
         << gp_text(first.band_title);
    gp << "\n";
  }
  gp << "unset multiplot\n";
  return gp.str();
}

}  // namespace normsim::plots
