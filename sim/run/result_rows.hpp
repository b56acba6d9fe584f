// The rows of the result tables: one definition of their columns and contents for layers.csv, summary.csv,
// theory.csv (check/) and the Python DataFrames (python/). Every table starts with the config id and every
// config key, swept or not (placement first, then the schema's order), so the tables of different runs
// concatenate; `metrics` (a list of names) is no column: it says which rows exist, never changes a value;
// then the metric and its index in one of two columns: `l` for a stream-indexed metric (x_l, l = 0..K), `k`
// for a sublayer-indexed one (sublayer k maps x_k to x_{k+1}, k = 0..K-1), the other empty; then `step`, the
// training step (sim/cpu/train_loop.hpp), only where the `steps` key is a column (some configuration sets
// it), so the files of a grid without steps keep their columns byte for byte (theory.csv: step 0, the mean
// field of init); then, only in a grid where some configuration is a block of n > 1 lanes (so files of one
// stream keep their header byte for byte), `lane`: `mean` for the lanes' mean, 0..n-1 for lane i, empty for a
// metric not of the lanes (docs/design/multistream.md 3.3; sim/lane_metrics.hpp). With both: ..., l, k, step,
// lane, ....
#pragma once
#include <cmath>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/lane_metrics.hpp"
#include "sim/record.hpp"
#include "sim/run/config_file.hpp"
#include "sim/run/config_schema.hpp"

namespace normsim::sim {

// Mean, standard error (sample sd / sqrt(n)) and count of the finite values. With n = 1 no spread can be
// estimated and se is 0 (readers must look at n); with n = 0 mean is NaN and no row is written.
struct Summary {
  double mean = NAN, se = 0;
  int n = 0;
};
Summary summarize(std::span<const double> values);

// records[c]: every sample of config c, in sample order.
using GridRecords = std::vector<std::vector<SampleRecord>>;

enum class ResultTable { layers, summary, theory };

// Whether a key marked when_set (sim/run/config_schema.hpp) is a column: null = none is.
using KeyIsSet = std::function<bool(const KeyInfo&)>;
// Set in a grid: some configuration's value differs from the default's.
KeyIsSet set_in(std::span<const Config> configs);
// Named in a list of keys (Python's frames: the keys their configurations carry).
KeyIsSet named_in(std::vector<std::string> keys);

// placement, then every other config key in the schema's order (all but the name lists: `metrics`), a
// when_set key only where is_set says.
std::vector<std::string> key_columns(const KeyIsSet& is_set = nullptr);
// Every column of `table`, in file order: config, key_columns(is_set), then the table's own columns (with
// `step` after `k` when has_step_column(is_set), then `lane` when `lanes`).
std::vector<std::string> table_columns(ResultTable table, const KeyIsSet& is_set = nullptr,
                                       bool lanes = false);
// Whether the tables have a `step` column: the `steps` key is set.
bool has_step_column(const KeyIsSet& is_set);
bool has_step_column(std::span<const Config> configs);
// Whether some configuration is a block of n > 1 lanes: then the tables have a `lane` column.
bool has_lanes(std::span<const Config> configs);

// A row's lane: kNoLane (one stream, or a metric not of the lanes: an empty field), kLanesMean ("mean"), or
// the lane's number.
inline constexpr int kNoLane = -2, kLanesMean = -1;
// The lane of metric `metric`'s value of the lanes' mean in a record of `lanes` lanes (0: one stream).
inline int mean_lane(std::size_t metric, std::size_t lanes) {
  return lanes > 1 && of_lanes_mean(int(metric)) ? kLanesMean : kNoLane;
}
std::string lane_field(int lane);  // "", "mean" or the number
// The lane of config `config`'s theory.csv row of metric `metric`: the mean field predicts the lanes' mean
// (theory/placements/lanes.cpp), labelled as summary.csv labels the measured mean.
int theory_lane(const Config& config, std::size_t metric);
// "l" or "k": the column that holds the index of metric `metric` (a position in metric_table()).
std::string_view index_column(std::size_t metric);

// The CSV header line of `table` for a grid's configurations (with its newline).
std::string csv_header(ResultTable table, std::span<const Config> configs);
// The CSV fields of config c up to and including its last key column ("c,pre,layernorm,...,"), values as
// format_value writes them; columns: key_columns(set_in(grid.configs)).
std::string csv_key_fields(const Grid& grid, std::size_t c, const std::vector<std::string>& columns);
// The metric's name and its index in the l or k column, and the step where the file has that column:
// "act_sq,3,," or "cos_next,,3," (step < 0: no step column), "act_sq,3,,2,"; with the lane column
// (lane_column: has_lanes of the grid), the lane's field after them: "act_sq,3,,mean," or
// "act_sq,3,,2,mean,".
std::string csv_metric_fields(std::size_t metric, std::size_t index, int step = -1);
std::string csv_metric_fields(std::size_t metric, std::size_t index, int step, int lane, bool lane_column);

// One value of layers.csv.
struct LayerValue {
  std::size_t config = 0;
  int sample = 0, step = 0;
  std::size_t metric = 0, index = 0;
  double value = 0;
  int lane = kNoLane;
};
// Calls f(LayerValue) for every finite value, in file order: config, sample, step, metric (table order),
// index, lane (the lanes' mean, then lane 0..n-1).
template <class F>
void for_each_layer_value(const GridRecords& records, F&& f) {
  for (std::size_t c = 0; c < records.size(); ++c)
    for (const auto& r : records[c])
      for (std::size_t m = 0; m < r.values.size(); ++m)
        for (std::size_t i = 0; i < r.values[m].size(); ++i) {
          if (std::isfinite(r.values[m][i]))
            f(LayerValue{c, r.sample, r.step, m, i, r.values[m][i], mean_lane(m, r.lanes.size())});
          for (std::size_t lane = 0; lane < r.lanes.size(); ++lane)
            if (i < r.lanes[lane][m].size() && std::isfinite(r.lanes[lane][m][i]))
              f(LayerValue{c, r.sample, r.step, m, i, r.lanes[lane][m][i], int(lane)});
        }
}

// One row of summary.csv.
struct SummaryValue {
  std::size_t config = 0, metric = 0, index = 0;
  int step = 0;
  Summary summary;
  int lane = kNoLane;
};
// Calls f(SummaryValue) for every (config, step, metric, index, lane) with a finite mean and se over at least
// one finite sample, in file order: config, step, metric (table order), index, lane (the mean, then 0..n-1).
void for_each_summary(const GridRecords& records, const std::function<void(const SummaryValue&)>& f);

// One row of nonfinite.csv: a stream that first held a NaN or Inf (metric "": every metric from there on is
// missing), or a statistic that came out NaN or Inf from a finite stream (its metric and index; a lane's
// written "token_cos (lane 1)", the file's header kept for every grid).
struct NonFiniteRow {
  std::size_t config = 0;
  int sample = 0;
  std::string_view pass, metric;
  int layer = 0;
  int lane = kNoLane;
  int step = 0;
};
// Calls f(NonFiniteRow) for every row, in file order: config, sample, step, its statistics, then its stream.
void for_each_nonfinite(const GridRecords& records, const std::function<void(const NonFiniteRow&)>& f);
// nonfinite.csv's header, and one row as a line of it (every writer of the file uses both); a grid with steps
// (has_step_column) appends a `step` column.
inline constexpr std::string_view kNonFiniteHeader = "config,sample,pass,layer,metric\n";
inline constexpr std::string_view kNonFiniteStepHeader = "config,sample,pass,layer,metric,step\n";
std::string nonfinite_line(const NonFiniteRow& r, bool with_step = false);
std::string nonfinite_metric(const NonFiniteRow& r);  // its metric field: "token_cos", "token_cos (lane 1)"

}  // namespace normsim::sim
