// Progress of a sweep on stderr: a bar with units done / total, elapsed time and ETA when stderr is a
// terminal; messages (warnings, --verbose lines) printed above the bar without tearing it. The bar and the
// ETA weigh each unit by its cost (sim/unit_plan.hpp's sample_cost x samples), not by its count: a sweep
// over depths would otherwise promise the deep configurations at the rate of the shallow ones.
#pragma once
#include <chrono>
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace normsim::sim {

// Seconds left when `cost_run` of work took `elapsed` seconds and `cost_left` remains (rates are cost per
// second); nothing before any work has run.
std::optional<double> remaining_seconds(double elapsed, double cost_run, double cost_left);

class Progress {
 public:
  // `unit_costs`: the cost of every unit of the sweep; `done` of them were finished before (resumed), and the
  // ETA uses only the rate of this invocation.
  Progress(std::vector<double> unit_costs, std::size_t done, bool bar, std::ostream& err);
  // One more unit finished, of cost `cost`.
  void advance(double cost);
  // The bar's text, without the terminal's line control (for tests and paint()).
  std::string line(double elapsed) const;
  // Prints one line (no trailing newline needed) above the bar.
  void message(std::string_view line);
  // Ends the bar's line.
  void finish();

 private:
  void paint();
  void clear();
  std::size_t total_, done_;
  double total_cost_, done_cost_, start_done_cost_;
  bool bar_, painted_ = false;
  std::ostream& err_;
  std::chrono::steady_clock::time_point start_;
};

// "1:02:03" or "2:03".
std::string format_duration(double seconds);

}  // namespace normsim::sim
