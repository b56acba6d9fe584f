// CSV reading (see csv_read.hpp).
#include "io/csv_read.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace normsim::io {

namespace {

// Splits the text into records of fields; `starts` gets the 1-based line where each record begins.
std::vector<std::vector<std::string>> parse_records(const std::string& text, std::vector<int>& starts) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false;
  bool record_open = false;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!record_open) {
      starts.push_back(line);
      record_open = true;
    }
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      record.push_back(std::move(field));
      field.clear();
      records.push_back(std::move(record));
      record.clear();
      record_open = false;
      ++line;
    } else {
      field += c;
    }
  }
  if (record_open) {
    record.push_back(std::move(field));
    records.push_back(std::move(record));
  }
  return records;
}

}  // namespace

std::vector<std::string> csv_line_fields(const std::string& line) {
  std::vector<int> starts;
  auto records = parse_records(line, starts);
  return records.empty() ? std::vector<std::string>(1) : std::move(records.front());
}

int CsvTable::find(std::string_view name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

int CsvTable::require(std::string_view name) const {
  const int index = find(name);
  if (index < 0)
    throw CsvError(path.string() + ": no column '" + std::string(name) +
                   "' in the header; the file does not follow docs/conventions.md (re-create it with the "
                   "normsim version that reads it)");
  return index;
}

std::string CsvTable::where(std::size_t row) const {
  return path.string() + ":" + std::to_string(row < lines.size() ? lines[row] : 0);
}

CsvTable read_csv(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CsvError("cannot read " + path.string() + " (check that it exists and is readable)");
  std::ostringstream buffer;
  buffer << in.rdbuf();

  CsvTable table;
  table.path = path;
  std::vector<int> starts;
  auto records = parse_records(buffer.str(), starts);
  std::size_t first = 0;
  // Skip blank lines before the header.
  while (first < records.size() && records[first].size() == 1 && records[first][0].empty()) ++first;
  if (first == records.size()) throw CsvError(path.string() + " is empty: it has no header line");
  table.header = std::move(records[first]);
  for (std::size_t r = first + 1; r < records.size(); ++r) {
    if (records[r].size() == 1 && records[r][0].empty()) continue;  // a blank line, e.g. the last one
    if (records[r].size() != table.header.size())
      throw CsvError(path.string() + ":" + std::to_string(starts[r]) + ": " +
                     std::to_string(records[r].size()) + " fields where the header has " +
                     std::to_string(table.header.size()));
    table.rows.push_back(std::move(records[r]));
    table.lines.push_back(starts[r]);
  }
  return table;
}

double parse_number(const CsvTable& table, std::size_t row, int column) {
  const std::string& text = table.rows[row][static_cast<std::size_t>(column)];
  // strtod, not from_chars: it also reads "nan" and "inf" the way C++ streams write them.
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size())
    throw CsvError(table.where(row) + ": column '" + table.header[static_cast<std::size_t>(column)] +
                   "' holds '" + text + "', which is not a number");
  return value;
}

bool is_lane_row(const std::vector<std::string>& fields, int lane_column) {
  if (lane_column < 0) return false;
  const std::string& lane = fields[std::size_t(lane_column)];
  return !lane.empty() && lane != "mean";
}

}  // namespace normsim::io
