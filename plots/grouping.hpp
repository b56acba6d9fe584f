// How a figure family splits a results folder: one key's values become the lines of a figure (the series
// key: label when it varies, as `variants` sets it, else placement when it varies), every other varying key
// gets one figure per combination of its values, except the keys that vary with the series key (a variant's
// other keys).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "results_folder.hpp"
#include "text.hpp"

namespace normsim::plots {

// The values of key k in display order: numeric order when all are numbers, else order of first appearance
// (the config file's order).
std::vector<std::string> key_values(const ResultsFolder& folder, int key);

struct Layout {
  int series_key = -1;           // index into folder.keys; -1 when nothing varies
  std::vector<int> figure_keys;  // varying keys other than the series key (and the excluded ones)
};

// The layout over the keys that vary, leaving out `excluded` (e.g. depth, the x axis of depth plots). When
// `series_in_figures` is set the series key joins the figure keys too (heatmaps: one figure per placement).
Layout choose_layout(const ResultsFolder& folder, const std::vector<std::string>& excluded,
                     bool series_in_figures);

// The summary rows of one figure: one combination of the figure keys' values.
struct RowGroup {
  std::vector<std::string> values;  // of layout.figure_keys
  std::vector<const SummaryRow*> rows;
};

// Groups the rows that pass `keep`, in display order of the figure keys' values.
template <typename Keep>
std::vector<RowGroup> group_rows(const ResultsFolder& folder, const std::vector<int>& figure_keys, Keep keep);

// "_depth-64_width-128": the figure-name suffix of a group.
std::string group_suffix(const ResultsFolder& folder, const std::vector<int>& figure_keys,
                         const std::vector<std::string>& values);
// "depth = 64, width = 128": the same for captions (plain text).
std::string group_caption(const ResultsFolder& folder, const std::vector<int>& figure_keys,
                          const std::vector<std::string>& values);

// Legend text of one value of a key: placements by the papers' names (Pre, Post, Mix, B2T, ...), other keys
// as "key = value".
Text value_title(const std::string& key, const std::string& value);

// The rows of one line: one configuration (rows sorted by layer).
struct SeriesRows {
  std::string config;
  std::string value;  // of the series key ("" when it is -1)
  Text title;
  std::vector<const SummaryRow*> rows;
};

// Splits a group's rows into series by configuration, ordered by the series key's value. Two configurations
// with the same value get their config id appended to the title, so no legend entry is ambiguous.
std::vector<SeriesRows> split_series(const ResultsFolder& folder, int series_key,
                                     const std::vector<const SummaryRow*>& rows);

// Position of a value in key_values order, for sorting.
std::size_t value_rank(const std::vector<std::string>& ordered, const std::string& value);

// --- template definition ---

template <typename Keep>
std::vector<RowGroup> group_rows(const ResultsFolder& folder, const std::vector<int>& figure_keys,
                                 Keep keep) {
  std::vector<std::vector<std::string>> orders;
  for (int key : figure_keys) orders.push_back(key_values(folder, key));
  std::vector<RowGroup> groups;
  for (const auto& row : folder.summary) {
    if (!keep(row)) continue;
    std::vector<std::string> values;
    for (int key : figure_keys) values.push_back(row.keys[static_cast<std::size_t>(key)]);
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const RowGroup& g) { return g.values == values; });
    if (it == groups.end()) it = groups.insert(groups.end(), RowGroup{values, {}});
    it->rows.push_back(&row);
  }
  std::sort(groups.begin(), groups.end(), [&](const RowGroup& a, const RowGroup& b) {
    for (std::size_t i = 0; i < orders.size(); ++i) {
      const auto ra = value_rank(orders[i], a.values[i]), rb = value_rank(orders[i], b.values[i]);
      if (ra != rb) return ra < rb;
    }
    return false;
  });
  return groups;
}

}  // namespace normsim::plots
