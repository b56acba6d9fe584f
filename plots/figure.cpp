// Helpers shared by the figure builders (see figure.hpp).
#include "figure.hpp"

#include "io/csv_write.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace normsim::plots {

// The shortest text that reads back as the same double (io::format_number, as results/*.csv): a figure's
// data file is read by plotting programs other than gnuplot too, and %.12g lost the last digits (issue 30).
std::string csv_number(double value) {
  if (std::isnan(value)) return "";  // an empty field: gnuplot's `missing`, skipped when drawing
  return io::format_number(value);
}

std::string script_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.12g", value);
  return buffer;
}

std::string file_stem_part(const std::string& text) {
  std::string out;
  for (unsigned char c : text) out += (std::isalnum(c) || c == '.' || c == '-' || c == '_') ? char(c) : '_';
  return out;
}

}  // namespace normsim::plots
