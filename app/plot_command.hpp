// `normsim plot OUT [options]`: the command-line face of render_folder. The normsim program passes the
// arguments after the word `plot` and returns what this returns.
#pragma once

#include <string>
#include <vector>

#include "plots/plot_options.hpp"

namespace normsim::app {

// Parses the options, renders, prints errors to stderr. Returns the exit status: 0 done (or --help),
// 2 usage or input error, 1 gnuplot missing or failing.
int plot_command(const std::vector<std::string>& args);

// The --help text.
std::string plot_usage();

}  // namespace normsim::app
