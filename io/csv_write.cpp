// CSV writing: numbers and quoted fields (see csv_write.hpp).
#include "io/csv_write.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <string_view>

namespace normsim::io {

// The shortest text that reads back as x. Where that is an integer of 16 or more digits (to_chars prefers
// 19016889231223029760 to 1.901688923122303e+19), scientific instead: CSV readers read a bare integer as an
// integer, and past int64's range pandas keeps such a column as strings (issue 30).
std::string format_number(double x) {
  std::array<char, 64> buf{};
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), x);
  const std::string_view text(buf.data(), std::size_t(end - buf.data()));
  if (std::abs(x) >= 1e15 && text.find_first_of(".eEni") == std::string_view::npos)
    end = std::to_chars(buf.data(), buf.data() + buf.size(), x, std::chars_format::scientific).ptr;
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

}  // namespace normsim::io
