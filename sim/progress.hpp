// Progress of a sweep on stderr: a bar with units done / total, elapsed time and ETA when stderr is a
// terminal; messages (warnings, --verbose lines) printed above the bar without tearing it.
#pragma once
#include <chrono>
#include <cstddef>
#include <ostream>
#include <string_view>

namespace normsim::sim {

class Progress {
 public:
  // `done` units were finished before (resumed); the ETA uses only the rate of this invocation.
  Progress(std::size_t total, std::size_t done, bool bar, std::ostream& err);
  void advance(std::size_t units = 1);
  // Prints one line (no trailing newline needed) above the bar.
  void message(std::string_view line);
  // Ends the bar's line.
  void finish();

 private:
  void paint();
  void clear();
  std::size_t total_, done_, start_done_;
  bool bar_, painted_ = false;
  std::ostream& err_;
  std::chrono::steady_clock::time_point start_;
};

// "1:02:03" or "2:03".
std::string format_duration(double seconds);

}  // namespace normsim::sim
