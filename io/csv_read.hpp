// A CSV file read whole into strings (RFC 4180: quoted fields may hold commas, quotes and newlines), as
// io/csv_write.hpp writes it and pandas too, and the same rules for one line of a file read line by line.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace normsim::io {

// A CSV file that cannot be read as one: missing or unreadable, no header, a row of the wrong width, a
// missing column, a field that is not a number. The message names the file (and line); a caller that
// reports its own kind of error (plots' input PlotError) rethrows it as that.
class CsvError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CsvTable {
  std::filesystem::path path;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // every row has header.size() fields
  std::vector<int> lines;                      // 1-based file line where each row starts, for error messages

  // Index of a column, or -1.
  int find(std::string_view name) const;
  // Index of a column; throws a CsvError naming the file when it is absent.
  int require(std::string_view name) const;
  // "<path>:<line>" of row i, the prefix of every error about that row.
  std::string where(std::size_t row) const;
};

// Reads a CSV file with a header line. Throws a CsvError if it cannot be read or a row has the wrong number
// of fields.
CsvTable read_csv(const std::filesystem::path& path);

// The fields of one line of a CSV file (its quoting rules, as read_csv reads them; "" gives one empty
// field): for reading a large file line by line.
std::vector<std::string> csv_line_fields(const std::string& line);

// Parses a whole field as a double ("nan", "inf" allowed); throws a CsvError naming table.where(row).
double parse_number(const CsvTable& table, std::size_t row, int column);

// Whether a row of a result table (layers.csv, summary.csv, theory.csv) is one lane's: its field in column
// `lane_column` (-1: the table has no `lane` column) is a lane's number, not "" or "mean" (the lanes' mean),
// docs/design/multistream.md 3.3. A reader that wants one value per config, metric and index skips it.
bool is_lane_row(const std::vector<std::string>& fields, int lane_column);

}  // namespace normsim::io
