// layers.csv streamed for the end values of each configuration (see sample_values.hpp).
#include "sample_values.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "io/csv_read.hpp"
#include "plot_error.hpp"

namespace normsim::plots {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

int column(const std::vector<std::string>& header, const std::string& name, const std::string& file) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return int(i);
  throw input_error(file + ": no column '" + name + "' in the header (docs/conventions.md)");
}

double number(const std::string& field, const std::string& where) {
  char* end = nullptr;
  const double v = std::strtod(field.c_str(), &end);
  if (field.empty() || *end != '\0') throw input_error(where + ": '" + field + "' is not a number");
  return v;
}

void store(std::vector<double>& by_sample, std::size_t sample, double value) {
  if (by_sample.size() <= sample) by_sample.resize(sample + 1, kNaN);
  by_sample[sample] = value;
}

}  // namespace

SampleValues read_end_values(const std::filesystem::path& layers_csv, const std::set<std::string>& metrics,
                             int step) {
  SampleValues values;
  std::ifstream in(layers_csv);
  std::string line;
  if (!in || !std::getline(in, line)) return values;
  const std::string file = layers_csv.string();
  const auto header = io::csv_line_fields(line);
  const int config = column(header, "config", file), sample = column(header, "sample", file);
  const int metric = column(header, "metric", file), l = column(header, "l", file);
  const int k = column(header, "k", file), value = column(header, "value", file);
  const auto lane_at = std::find(header.begin(), header.end(), "lane");  // lanes: the mean's rows only
  const int lane = lane_at == header.end() ? -1 : int(lane_at - header.begin());
  const auto step_at = std::find(header.begin(), header.end(), "step");
  if (step_at == header.end() && step != 0) return values;  // a folder without steps holds step 0 only
  const int step_column = step_at == header.end() ? -1 : int(step_at - header.begin());
  for (int n = 2; std::getline(in, line); ++n) {
    const auto f = io::csv_line_fields(line);
    const std::string where = file + ":" + std::to_string(n);
    if (f.size() != header.size())
      throw input_error(where + ": " + std::to_string(f.size()) + " fields, " + "the header has " +
                        std::to_string(header.size()));
    if (!metrics.contains(f[std::size_t(metric)]) || io::is_lane_row(f, lane)) continue;
    if (step_column >= 0 && number(f[std::size_t(step_column)], where) != double(step)) continue;
    const std::string& index = f[std::size_t(l)].empty() ? f[std::size_t(k)] : f[std::size_t(l)];
    const int layer = int(number(index, where));
    const auto s = std::size_t(number(f[std::size_t(sample)], where));
    const double v = number(f[std::size_t(value)], where);
    EndValues& e = values[{f[std::size_t(config)], f[std::size_t(metric)]}];
    if (e.first_layer < 0 || layer < e.first_layer)
      e.first_layer = layer, e.first.assign(e.first.size(), kNaN);
    if (layer == e.first_layer) store(e.first, s, v);
    if (layer > e.last_layer) e.last_layer = layer, e.last.assign(e.last.size(), kNaN);
    if (layer == e.last_layer) store(e.last, s, v);
  }
  return values;
}

}  // namespace normsim::plots
