// Per-sample values from layers.csv at each configuration's first and last layer: what a depth figure fits
// (stats/growth.hpp fits every sample's series, as a claim does, so the figure's exponent and interval are a
// claim's). The file is streamed and only these values are kept: a large sweep's layers.csv is never held
// whole.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace normsim::plots {

struct EndValues {
  int first_layer = -1;       // the smallest l (or k) seen for this config and metric
  int last_layer = -1;        // the largest
  std::vector<double> first;  // by sample: the value at first_layer (NaN: absent)
  std::vector<double> last;   // by sample: the value at last_layer (NaN: absent)
};

// (config, metric) -> its end values, for `metrics` only, of training step `step` (a layers.csv without a
// step column is step 0). Empty when layers.csv is absent (the figures then print no fitted exponent and say
// why); a malformed file is an input PlotError naming file and line.
using SampleValues = std::map<std::pair<std::string, std::string>, EndValues>;
SampleValues read_end_values(const std::filesystem::path& layers_csv, const std::set<std::string>& metrics,
                             int step = 0);

}  // namespace normsim::plots
