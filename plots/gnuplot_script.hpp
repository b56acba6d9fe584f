// The frame every figure's .gp script shares: a settings block a user edits (size, font, formats), the
// series styles, and a loop that draws the same plot once per output format. The figure supplies the rest.
#pragma once

#include <string>
#include <vector>

#include "plot_options.hpp"

namespace normsim::plots {

struct ScriptSpec {
  std::string name;         // file stem: reads <name>.csv, writes <name>.<format>
  std::string description;  // one line saying what the figure shows
  std::string columns;      // one line naming the columns of <name>.csv
  std::string preamble;     // commands run once, before the loop (title arrays, axes that never change)
  std::string body;         // commands run per format: labels (through `tex`), ranges, plot
  int panels = 1;           // > 1: a multiplot (see stacked_panel_height)
  bool facets = false;      // the panels are facets (ChartLayout::facets): sized by facet_panel_height
};

// The one font of every PDF, SVG and PNG, pinned so a figure looks the same on every machine: Liberation Sans
// (metric-compatible with Helvetica and Arial, covers every symbol the labels use; Debian: fonts-liberation2,
// installed by scripts/setup.sh). Text is this many points at every size, in every format.
inline constexpr const char* figure_font = "Liberation Sans";
inline constexpr int figure_font_size = 8;

// Several panels do not fit side by side in one column: there they are stacked, each this tall (inches), and
// the figure grows to hold them; on a two-column figure they sit side by side at the chosen size.
inline constexpr double stacked_panel_height = 1.6;
inline constexpr double stacked_below_width = 5.0;  // inches
// Facets stack one above the other on narrow figures, this tall each; on wide ones they sit two abreast,
// stacked_panel_height tall, and the figure grows past its chosen height when they need it.
inline constexpr double facet_panel_height = 1.25;

// The whole script. Inside `body`, `tex` is 1 while the cairolatex version is drawn (labels then must be
// LaTeX) and `data` names the CSV file.
std::string gnuplot_script(const ScriptSpec& spec, const PlotOptions& options);

// The formats the script draws, in its own words: "pdf svg png", plus "tex" with --latex.
std::string script_formats(const PlotOptions& options);

// Files one format writes: <name>.<format>, or <name>-tex.tex and <name>-tex.pdf for "tex".
std::vector<std::string> format_outputs(const std::string& name, const std::string& format);

}  // namespace normsim::plots
