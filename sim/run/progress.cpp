// The progress bar: redrawn in place with '\r' after each finished unit.
#include "sim/run/progress.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>
#include <string>

namespace normsim::sim {

std::string format_duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  const long h = s / 3600, m = s / 60 % 60, r = s % 60;
  char buf[32];
  if (h > 0)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", h, m, r);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", m, r);
  return buf;
}

std::optional<double> remaining_seconds(double elapsed, double cost_run, double cost_left) {
  if (cost_run <= 0) return std::nullopt;
  return elapsed / cost_run * cost_left;
}

Progress::Progress(std::vector<double> unit_costs, std::size_t done, bool bar, std::ostream& err)
    : total_(unit_costs.size()),
      done_(done),
      total_cost_(std::accumulate(unit_costs.begin(), unit_costs.end(), 0.0)),
      done_cost_(std::accumulate(unit_costs.begin(), unit_costs.begin() + std::min(done, total_), 0.0)),
      start_done_cost_(done_cost_),
      bar_(bar),
      err_(err),
      start_(std::chrono::steady_clock::now()) {
  if (bar_) paint();
}

void Progress::advance(double cost) {
  ++done_;
  done_cost_ += cost;
  if (bar_) paint();
}

void Progress::message(std::string_view line) {
  clear();
  err_ << line << "\n";
  if (bar_) paint();
  err_.flush();
}

void Progress::finish() {
  if (painted_) err_ << "\n";
  painted_ = false;
  err_.flush();
}

void Progress::clear() {
  if (painted_) err_ << "\r\033[K";
  painted_ = false;
}

std::string Progress::line(double elapsed) const {
  constexpr int kWidth = 30;
  const double frac = total_cost_ > 0 ? std::min(1.0, done_cost_ / total_cost_) : 1.0;
  const int filled = static_cast<int>(frac * kWidth);
  std::ostringstream text;
  text << '[' << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << done_ << '/'
       << total_ << " units  elapsed " << format_duration(elapsed);
  if (done_ < total_) {
    const auto left = remaining_seconds(elapsed, done_cost_ - start_done_cost_, total_cost_ - done_cost_);
    text << "  ETA " << (left ? format_duration(*left) : "--:--");
  }
  return text.str();
}

void Progress::paint() {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  err_ << "\r\033[K" << line(elapsed) << std::flush;
  painted_ = true;
}

}  // namespace normsim::sim
