// `normsim coord CONFIG --sweep width=128,256,512 --out OUT`: a coordinate check (issue 28 item 4). The run
// is `normsim run`'s (the same result files, resumable, every run option passed through), with the swept key
// set as a list; then check/coord.hpp fits each quantity's exponent against it and compares it with the
// prediction, and the figures are drawn as `normsim plot OUT` draws them (plots/coord_figures.hpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace normsim::app {

using RunCommand = std::function<int(const std::vector<std::string>&)>;

// `run` is `normsim run`'s body (app/normsim.cpp), called with the arguments it would take. Returns the
// exit status; throws cli::UsageError for a bad --sweep.
int coord_command(const std::vector<std::string>& args, const RunCommand& run);

}  // namespace normsim::app
