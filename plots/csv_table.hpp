// A CSV file read whole into strings (RFC 4180: quoted fields may hold commas, quotes and newlines), and the
// quoting used when writing one. Numbers are parsed by the caller, which knows which file and line to blame.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace normsim::plots {

struct CsvTable {
  std::filesystem::path path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // every row has header.size() fields
  std::vector<int> lines;                      // 1-based file line where each row starts, for error messages

  // Index of a column, or -1.
  int find(std::string_view name) const;
  // Index of a column; throws an input PlotError naming the file when it is absent.
  int require(std::string_view name) const;
  // "<path>:<line>" of row i, the prefix of every error about that row.
  std::string where(std::size_t row) const;
};

// Reads a CSV file with a header line. Throws an input PlotError if it cannot be read or a row has the wrong
// number of fields.
CsvTable read_csv(const std::filesystem::path& path);

// The fields of one line of a CSV file (its quoting rules, as read_csv reads them; "" gives one empty
// field): for reading a large file line by line.
std::vector<std::string> csv_line_fields(const std::string& line);

// Parses a whole field as a double ("nan", "inf" allowed); throws an input PlotError naming table.where(row).
double parse_number(const CsvTable& table, std::size_t row, int column);

// A field quoted only when it must be (comma, quote or newline inside).
std::string csv_field(std::string_view text);

}  // namespace normsim::plots
