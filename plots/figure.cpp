// Helpers shared by the figure builders (see figure.hpp).
#include "figure.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>

namespace normsim::plots {

std::string csv_number(double value) {
  if (std::isnan(value)) return "";  // an empty field: gnuplot's `missing`, skipped when drawing
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
