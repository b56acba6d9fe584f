// One figure before it is drawn: the CSV it plots and the gnuplot script that draws it. Figure builders make
// these from a results folder; the renderer turns each into <name>.{csv,gp,pdf,svg,png} under OUT/figures.
#pragma once

#include <string>

#include "gnuplot_script.hpp"

namespace normsim::plots {

struct Figure {
  std::string name;     // file stem under OUT/figures, e.g. profile_act_sq_depth-64
  std::string kind;     // profile, depth, heatmap, gradients or claim: the report's section
  std::string caption;  // one or two sentences for the report
  std::string csv;      // exactly the data the figure plots, with a header line
  ScriptSpec script;    // name and columns are filled in by the builder
};

// A number as written into a figure's CSV: the shortest text that reads back as the same double; NaN as an
// empty field (gnuplot's missing value).
std::string csv_number(double value);

// A number as written into a gnuplot script (ranges, tic labels): 12 significant digits, so that a tic at
// 3 * 10^-1 reads 0.3, not 0.30000000000000004.
std::string script_number(double value);

// A figure-name fragment from free text: letters, digits, '.', '-' and '_' kept, anything else becomes '_'.
std::string file_stem_part(const std::string& text);

}  // namespace normsim::plots
