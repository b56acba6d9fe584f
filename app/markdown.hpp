// Text in a Markdown table cell: a '|' would end the cell, so it is escaped.
#pragma once
#include <string>
#include <string_view>

namespace normsim::app {

inline std::string md_escape(std::string_view s) {
  std::string r;
  for (char c : s) {
    if (c == '|') r += '\\';
    r += c;
  }
  return r;
}

}  // namespace normsim::app
