// Finding and running gnuplot, the only program the plots library starts.
#pragma once

#include <filesystem>
#include <string>

namespace normsim::plots {

// The gnuplot to run: $NORMSIM_GNUPLOT when set, else `gnuplot` on PATH. Throws an environment PlotError
// saying how to install it when there is none.
std::filesystem::path find_gnuplot();

struct GnuplotResult {
  int exit_status = 0;  // 128 + signal number when gnuplot was killed
  std::string output;   // what gnuplot printed (stdout and stderr together)
};

// Runs `gnuplot <script>` with `dir` as the working directory, as the saved script will be run by a user.
// Safe to call from several threads at once.
GnuplotResult run_gnuplot(const std::filesystem::path& gnuplot, const std::filesystem::path& dir,
                          const std::string& script);

}  // namespace normsim::plots
