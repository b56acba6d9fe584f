// The progress bar: redrawn in place with '\r' after each finished unit.
#include "sim/progress.hpp"

#include <cmath>
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

Progress::Progress(std::size_t total, std::size_t done, bool bar, std::ostream& err)
    : total_(total),
      done_(done),
      start_done_(done),
      bar_(bar),
      err_(err),
      start_(std::chrono::steady_clock::now()) {
  if (bar_) paint();
}

void Progress::advance(std::size_t units) {
  done_ += units;
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

void Progress::paint() {
  constexpr int kWidth = 30;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double frac = total_ ? static_cast<double>(done_) / total_ : 1.0;
  const int filled = static_cast<int>(frac * kWidth);
  std::string line = "\r\033[K[" + std::string(filled, '#') + std::string(kWidth - filled, '.') + "] " +
                     std::to_string(done_) + "/" + std::to_string(total_) + " units  elapsed " +
                     format_duration(elapsed);
  const std::size_t ran = done_ - start_done_;
  if (done_ < total_)
    line += ran > 0 ? "  ETA " + format_duration(elapsed / ran * (total_ - done_)) : "  ETA --:--";
  err_ << line << std::flush;
  painted_ = true;
}

}  // namespace normsim::sim
