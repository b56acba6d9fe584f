// Series styles that survive colour-blindness and greyscale printing: Okabe-Ito colours (Okabe & Ito 2008,
// "Color Universal Design"), each line type also differing in point type and dash pattern. Reference curves
// (theory, fits, predictions) share one short-dash pattern that no data series uses.
#pragma once

#include <string>

namespace normsim::plots {

// gnuplot commands defining line types 1..16 (and `set linetype cycle 16`).
std::string gp_line_styles();

// Dash pattern and width of reference curves (theory, fitted lines, predictions), as gnuplot `dt` and `lw`
// values. They are drawn under the data and twice as wide as its lines (dash lengths scale with the width),
// so a reference curve that matches its series shows as a dashed edge around the series' line.
inline constexpr const char* reference_dash = "(2,1.5)";
inline constexpr const char* reference_width = "3";

// A sequential palette (viridis) for heatmaps: perceptually uniform and monotone in lightness, so it reads
// in greyscale and with every common colour-vision deficiency.
std::string gp_heatmap_palette();

}  // namespace normsim::plots
