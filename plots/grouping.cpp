// Splitting a results folder into figures and series (see grouping.hpp).
#include "grouping.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "figure.hpp"
#include "vocab/builtin_blocks.hpp"
#include "vocab/names.hpp"

namespace normsim::plots {

namespace {

bool is_number(const std::string& text) {
  char* end = nullptr;
  std::strtod(text.c_str(), &end);
  return !text.empty() && end == text.c_str() + text.size();
}

// Whether every row with one value of key `by` has one value of key `k` (k is a function of by).
bool determined_by(const ResultsFolder& folder, int by, int k) {
  std::map<std::string, std::string> seen;
  for (const auto& row : folder.summary) {
    const auto [it, fresh] = seen.emplace(row.keys[std::size_t(by)], row.keys[std::size_t(k)]);
    if (!fresh && it->second != row.keys[std::size_t(k)]) return false;
  }
  return true;
}

}  // namespace

std::vector<std::string> key_values(const ResultsFolder& folder, int key) {
  std::vector<std::string> values;
  for (const auto& row : folder.summary) {
    const auto& value = row.keys[static_cast<std::size_t>(key)];
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  }
  if (std::all_of(values.begin(), values.end(), is_number))
    std::stable_sort(values.begin(), values.end(), [](const std::string& a, const std::string& b) {
      return std::strtod(a.c_str(), nullptr) < std::strtod(b.c_str(), nullptr);
    });
  return values;
}

std::size_t value_rank(const std::vector<std::string>& ordered, const std::string& value) {
  return static_cast<std::size_t>(std::find(ordered.begin(), ordered.end(), value) - ordered.begin());
}

Layout choose_layout(const ResultsFolder& folder, const std::vector<std::string>& excluded,
                     bool series_in_figures) {
  std::vector<int> varying;
  for (int k = 0; k < static_cast<int>(folder.keys.size()); ++k) {
    const auto& key = folder.keys[static_cast<std::size_t>(k)];
    if (std::find(excluded.begin(), excluded.end(), key) != excluded.end()) continue;
    if (key_values(folder, k).size() > 1) varying.push_back(k);
  }
  Layout layout;
  // A varying label (one per variant, `variants`) names the lines, and the keys that vary with it (the other
  // keys of a variant) split nothing further; else keys[0], placement, when it varies: the papers compare
  // placements in one plot.
  const int label = folder.key_index("label");
  const auto labelled = std::find(varying.begin(), varying.end(), label);
  if (labelled != varying.end()) {
    std::rotate(varying.begin(), labelled, labelled + 1);
    std::erase_if(varying, [&](int k) { return k != label && determined_by(folder, label, k); });
  }
  if (!varying.empty() && !series_in_figures) {
    layout.series_key = varying.front();
    varying.erase(varying.begin());
  } else if (series_in_figures) {
    layout.series_key = 0;  // a constant placement names the one line or map of each figure
  }
  layout.figure_keys = varying;
  return layout;
}

std::string group_suffix(const ResultsFolder& folder, const std::vector<int>& figure_keys,
                         const std::vector<std::string>& values) {
  std::string suffix;
  for (std::size_t i = 0; i < figure_keys.size(); ++i)
    suffix += "_" + file_stem_part(folder.keys[static_cast<std::size_t>(figure_keys[i])]) + "-" +
              file_stem_part(values[i]);
  return suffix;
}

std::string group_caption(const ResultsFolder& folder, const std::vector<int>& figure_keys,
                          const std::vector<std::string>& values) {
  std::string caption;
  for (std::size_t i = 0; i < figure_keys.size(); ++i)
    caption += (i ? ", " : "") + folder.keys[static_cast<std::size_t>(figure_keys[i])] + " = " + values[i];
  return caption;
}

Text value_title(const std::string& key, const std::string& value) {
  if (key == "placement") {  // a built-in's label from its definition (vocab/builtin_blocks.cpp)
    const auto id = vocab::find<vocab::Placement>(value);
    const vocab::BuiltinPlacement* builtin = id ? vocab::find_builtin(*id) : nullptr;
    return plain_text(builtin ? std::string(builtin->label) : value);
  }
  if (key == "label") return plain_text(value);  // a variant's own name
  return plain_text(key + " = " + value);
}

std::vector<SeriesRows> split_series(const ResultsFolder& folder, int series_key,
                                     const std::vector<const SummaryRow*>& rows) {
  std::vector<SeriesRows> series;
  for (const SummaryRow* row : rows) {
    auto it = std::find_if(series.begin(), series.end(),
                           [&](const SeriesRows& s) { return s.config == row->config; });
    if (it == series.end()) {
      const std::string value = series_key >= 0 ? row->keys[static_cast<std::size_t>(series_key)] : "";
      const std::string key = series_key >= 0 ? folder.keys[static_cast<std::size_t>(series_key)] : "";
      it = series.insert(
          series.end(),
          SeriesRows{
              row->config, value, series_key >= 0 ? value_title(key, value) : plain_text(row->config), {}});
    }
    it->rows.push_back(row);
  }
  for (auto& s : series)
    std::stable_sort(s.rows.begin(), s.rows.end(), [](auto* a, auto* b) { return a->layer < b->layer; });
  if (series_key >= 0) {
    const auto order = key_values(folder, series_key);
    std::stable_sort(series.begin(), series.end(), [&](const SeriesRows& a, const SeriesRows& b) {
      return value_rank(order, a.value) < value_rank(order, b.value);
    });
    for (auto& s : series) {
      const auto same = std::count_if(series.begin(), series.end(),
                                      [&](const SeriesRows& o) { return o.value == s.value; });
      if (same > 1) s.title = s.title + plain_text(" (" + s.config + ")");
    }
  }
  return series;
}

}  // namespace normsim::plots
