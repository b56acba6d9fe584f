// Series styles that survive colour-blindness and greyscale printing: Okabe-Ito colours (Okabe & Ito 2008,
// "Color Universal Design"), each line type also differing in point type and dash pattern. Reference curves
// (theory, fits, predictions) share one short-dash pattern that no data series uses.
#pragma once

#include <string>

namespace normsim::plots {

// gnuplot commands defining line types 1..16 (and `set linetype cycle 16`).
std::string gp_line_styles();

// Style of reference curves (theory, fitted lines, predictions): thin (0.5 pt, a third of a data line), dark
// grey and dashed, drawn behind the data, so where the measurement agrees with it the data line covers it
// and where they part it shows. One style for all of them, so one legend swatch drawn in it is exact.
inline constexpr const char* reference_dash = "(6,4)";
inline constexpr const char* reference_width = "1";
inline constexpr const char* reference_colour = "#4D4D4D";

// A sequential palette (viridis) for heatmaps: perceptually uniform and monotone in lightness, so it reads
// in greyscale and with every common colour-vision deficiency.
std::string gp_heatmap_palette();

}  // namespace normsim::plots
