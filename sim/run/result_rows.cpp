// The result tables' columns and rows (see result_rows.hpp).
#include "sim/run/result_rows.hpp"

#include <algorithm>
#include <stdexcept>

#include "io/csv_write.hpp"
#include "sim/metrics.hpp"
#include "sim/placement.hpp"
#include "sim/run/config_schema.hpp"

namespace normsim::sim {

Summary summarize(std::span<const double> values) {
  // Welford's update: no overflow of a plain sum for large finite values, no cancellation in the spread.
  Summary s;
  double mean = 0, m2 = 0;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    ++s.n;
    const double delta = v - mean;
    mean += delta / s.n;
    m2 += delta * (v - mean);
  }
  if (s.n == 0) return s;
  s.mean = mean;
  if (s.n >= 2) s.se = std::sqrt(m2 / (s.n - 1)) / std::sqrt(static_cast<double>(s.n));
  return s;
}

KeyIsSet set_in(std::span<const Config> configs) {
  return [configs](const KeyInfo& k) {
    const std::string unset = format_value(k.get(Config{}));
    return std::any_of(configs.begin(), configs.end(),
                       [&](const Config& c) { return format_value(k.get(c)) != unset; });
  };
}

KeyIsSet named_in(std::vector<std::string> keys) {
  return [keys = std::move(keys)](const KeyInfo& k) {
    return std::find(keys.begin(), keys.end(), k.name) != keys.end();
  };
}

std::vector<std::string> key_columns(const KeyIsSet& is_set) {
  std::vector<std::string> cols{"placement"};
  for (const auto& k : config_keys())
    if (k.name != "placement" && k.type != KeyType::name_list && (!k.when_set || (is_set && is_set(k))))
      cols.emplace_back(k.name);
  return cols;
}

std::vector<std::string> table_columns(ResultTable table, const KeyIsSet& is_set, bool lanes) {
  std::vector<std::string> cols{"config"};
  for (auto& k : key_columns(is_set)) cols.push_back(std::move(k));
  if (table == ResultTable::layers) cols.emplace_back("sample");
  for (const char* c : {"metric", "l", "k"}) cols.emplace_back(c);
  if (has_step_column(is_set)) cols.emplace_back("step");
  if (lanes) cols.emplace_back("lane");
  if (table == ResultTable::summary)
    for (const char* c : {"mean", "se", "n"}) cols.emplace_back(c);
  else
    cols.emplace_back("value");
  return cols;
}

bool has_step_column(const KeyIsSet& is_set) {
  return is_set && is_set(*find_key("steps"));
}

bool has_step_column(std::span<const Config> configs) {
  return has_step_column(set_in(configs));
}

std::string_view index_column(std::size_t metric) {
  const auto table = metric_table();
  if (metric >= table.size())
    throw std::logic_error("record holds metric " + std::to_string(metric) + " beyond the table");
  return table[metric].index == MetricIndex::stream ? "l" : "k";
}

bool has_lanes(std::span<const Config> configs) {
  return std::any_of(configs.begin(), configs.end(),
                     [](const Config& c) { return placement_for(c)->lanes() > 1; });
}

int theory_lane(const Config& config, std::size_t metric) {
  return mean_lane(metric, std::size_t(std::max(placement_for(config)->lanes(), 1)));
}

std::string lane_field(int lane) {
  return lane == kNoLane ? "" : lane == kLanesMean ? "mean" : std::to_string(lane);
}

std::string csv_header(ResultTable table, std::span<const Config> configs) {
  std::string s;
  for (const auto& col : table_columns(table, set_in(configs), has_lanes(configs)))
    s += (s.empty() ? "" : ",") + col;
  return s + "\n";
}

std::string csv_key_fields(const Grid& grid, std::size_t c, const std::vector<std::string>& columns) {
  std::string s = std::to_string(c) + ",";
  for (const auto& col : columns) s += io::csv_field(format_value(find_key(col)->get(grid.configs[c]))) + ",";
  return s;
}

std::string csv_metric_fields(std::size_t metric, std::size_t index, int step) {
  const std::string i = std::to_string(index);
  const bool stream = index_column(metric) == "l";
  std::string fields = std::string(metric_table()[metric].name) + "," + (stream ? i + ",," : "," + i + ",");
  if (step >= 0) fields.append(std::to_string(step)).push_back(',');
  return fields;
}

std::string csv_metric_fields(std::size_t metric, std::size_t index, int step, int lane, bool lane_column) {
  return csv_metric_fields(metric, index, step) + (lane_column ? lane_field(lane) + "," : "");
}

namespace {

// Values[m][i] of one record: its `values` (lane < 0) or lane `lane`'s.
const std::vector<std::vector<double>>* values_of(const SampleRecord& r, int lane) {
  if (lane < 0) return &r.values;
  return std::size_t(lane) < r.lanes.size() ? &r.lanes[std::size_t(lane)] : nullptr;
}

// The summary over config `at.config`'s samples of step `at.step` of metric `at.metric` at index `at.index`
// of lane `at.lane` (< 0: the records' values), if any, passed to f.
void summarize_at(const std::vector<SampleRecord>& samples, SummaryValue at, std::size_t lanes,
                  std::vector<double>& across, const std::function<void(const SummaryValue&)>& f) {
  const std::size_t m = at.metric, i = at.index;
  across.clear();
  for (const auto& r : samples)
    if (const auto* v = values_of(r, at.lane); r.step == at.step && v && m < v->size() && i < (*v)[m].size())
      across.push_back((*v)[m][i]);
  at.summary = summarize(across);
  const Summary& s = at.summary;
  if (s.n == 0 || !std::isfinite(s.mean) || !std::isfinite(s.se)) return;  // never NaN or Inf
  if (at.lane < 0) at.lane = mean_lane(m, lanes);
  f(at);
}

}  // namespace

void for_each_summary(const GridRecords& records, const std::function<void(const SummaryValue&)>& f) {
  std::vector<double> across;
  for (std::size_t c = 0; c < records.size(); ++c) {
    std::size_t metrics = 0, lanes = 0;
    int steps = 0;
    for (const auto& r : records[c]) {
      metrics = std::max(metrics, r.values.size()), lanes = std::max(lanes, r.lanes.size());
      steps = std::max(steps, r.step);
    }
    for (int step = 0; step <= steps; ++step)
      for (std::size_t m = 0; m < metrics; ++m) {
        std::size_t size = 0;
        for (const auto& r : records[c])
          if (r.step == step && m < r.values.size()) size = std::max(size, r.values[m].size());
        for (std::size_t i = 0; i < size; ++i)
          for (int lane = -1; lane < int(lanes); ++lane)
            summarize_at(records[c], SummaryValue{c, m, i, step, {}, lane}, lanes, across, f);
      }
  }
}

void for_each_nonfinite(const GridRecords& records, const std::function<void(const NonFiniteRow&)>& f) {
  for (std::size_t c = 0; c < records.size(); ++c)
    for (const auto& r : records[c]) {
      for (const auto& s : r.nonfinite_statistics) {
        const MetricInfo& m = metric_table()[static_cast<std::size_t>(s.metric)];
        f(NonFiniteRow{c, r.sample, pass_name(m.pass), m.name, s.layer, s.lane < 0 ? kNoLane : s.lane,
                       r.step});
      }
      if (r.nonfinite)
        f(NonFiniteRow{c, r.sample, r.nonfinite->pass, "", r.nonfinite->layer, kNoLane, r.step});
    }
}

std::string nonfinite_metric(const NonFiniteRow& r) {
  return std::string(r.metric) + (r.lane >= 0 ? " (lane " + std::to_string(r.lane) + ")" : "");
}

std::string nonfinite_line(const NonFiniteRow& r, bool with_step) {
  std::string line = std::to_string(r.config) + "," + std::to_string(r.sample) + "," + io::csv_field(r.pass) +
                     "," + std::to_string(r.layer) + "," + nonfinite_metric(r);
  if (with_step) line.append(",").append(std::to_string(r.step));
  return line + "\n";
}

}  // namespace normsim::sim
