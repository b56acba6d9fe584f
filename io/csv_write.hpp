// CSV fields and numbers as normsim writes them: numbers in the shortest form that reads back to the same
// double, text quoted only when it holds a comma, quote or newline (io/csv_read.hpp reads them back).
#pragma once
#include <string>
#include <string_view>

namespace normsim::io {

// Shortest decimal that round-trips (std::to_chars), e.g. 0.1, 1e-05, 256.
std::string format_number(double x);
// `text` as one CSV field (RFC 4180 quoting when needed).
std::string csv_field(std::string_view text);

}  // namespace normsim::io
