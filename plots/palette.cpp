// Line types and heatmap palette (see palette.hpp).
#include "palette.hpp"

#include <array>

namespace normsim::plots {

std::string gp_line_styles() {
  // Yellow (#F0E442) is left out: too light on white paper.
  static constexpr std::array<const char*, 7> colours = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                         "#E69F00", "#56B4E9", "#000000"};
  // Filled circle, square, triangle up, diamond, triangle down, open circle, open square.
  static constexpr std::array<int, 7> points = {7, 5, 9, 13, 11, 6, 4};
  // Solid, dash-dot, dotted, dash-dot-dot, long dash: none is the reference curves' (4,3).
  static constexpr std::array<const char*, 5> dashes = {"solid", "(8,3,2,3)", "(2,2)", "(8,3,2,3,2,3)",
                                                        "(14,4)"};
  std::string out =
      "# Okabe-Ito colours; point type and dash pattern differ too, so greyscale prints work.\n";
  for (int i = 0; i < 16; ++i) {
    // Colours cycle with period 7 and dashes with period 5, so neighbours never share both.
    out += "set linetype " + std::to_string(i + 1) + " lc rgb '" + colours[i % 7] + "' lw 1.5 dt " +
           dashes[i % 5] + " pt " + std::to_string(points[(i / 7 + i) % 7]) + " ps 0.6\n";
  }
  out += "set linetype cycle 16\n";
  return out;
}

std::string gp_heatmap_palette() {
  return "set palette defined (0 '#440154', 0.25 '#3B528B', 0.5 '#21918C', 0.75 '#5EC962', 1 '#FDE725')"
         "  # viridis\n";
}

}  // namespace normsim::plots
