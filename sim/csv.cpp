// CSV formatting helpers.
#include "sim/csv.hpp"

#include <array>
#include <charconv>

namespace normsim::sim {

std::string format_number(double x) {
  std::array<char, 64> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), x);
  return std::string(buf.data(), end);
}

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string s = "\"";
  for (char c : text) {
    if (c == '"') s += '"';
    s += c;
  }
  return s + "\"";
}

}  // namespace normsim::sim
