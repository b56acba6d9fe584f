// Drawing figures: each is written to a private staging folder inside OUT/figures, drawn there by running its
// own .gp script with gnuplot (so the saved script is known to work), and only then moved into place. A
// figure whose drawing fails leaves nothing behind.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "figure.hpp"
#include "plot_options.hpp"

namespace normsim::plots {

struct RenderedFigure {
  std::string name;
  std::string kind;
  std::string caption;
  std::vector<std::string> files;  // file names in the figures folder: csv, gp and every drawn format
};

// Draws every figure into `figures_dir` (which must exist), several gnuplot processes at a time. Throws an
// environment PlotError naming the figures that failed, with gnuplot's message; the others are kept.
std::vector<RenderedFigure> render_figures(const std::vector<Figure>& figures,
                                           const std::filesystem::path& figures_dir,
                                           const PlotOptions& options, const std::filesystem::path& gnuplot);

}  // namespace normsim::plots
