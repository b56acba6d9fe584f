// The rows of the result tables: one definition of their columns and contents for layers.csv, summary.csv,
// theory.csv (check/) and the Python DataFrames (python/). Every table starts with the config id and every
// config key, swept or not (placement first, then the schema's order), so the tables of different runs
// concatenate; `metrics` (a list of names) is no column: it says which rows exist, never changes a value;
// then the metric and its index in one of two columns: `l` for a stream-indexed metric (x_l, l = 0..K), `k`
// for a sublayer-indexed one (sublayer k maps x_k to x_{k+1}, k = 0..K-1), the other empty; then `step`, the
// training step (sim/train_loop.hpp), only where the `steps` key is a column (some configuration sets it), so
// the files of a grid without steps keep their columns byte for byte (theory.csv: step 0, the mean field of
// init).
#pragma once
#include <cmath>
#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config_file.hpp"
#include "sim/config_schema.hpp"
#include "sim/record.hpp"

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

// Whether a key marked when_set (sim/config_schema.hpp) is a column: null = none is.
using KeyIsSet = std::function<bool(const KeyInfo&)>;
// Set in a grid: some configuration's value differs from the default's.
KeyIsSet set_in(std::span<const Config> configs);
// Named in a list of keys (Python's frames: the keys their configurations carry).
KeyIsSet named_in(std::vector<std::string> keys);

// placement, then every other config key in the schema's order (all but the name lists: `metrics`), a
// when_set key only where is_set says.
std::vector<std::string> key_columns(const KeyIsSet& is_set = nullptr);
// Every column of `table`, in file order: config, key_columns(is_set), then the table's own columns.
std::vector<std::string> table_columns(ResultTable table, const KeyIsSet& is_set = nullptr);
// Whether the tables have a `step` column: the `steps` key is set.
bool has_step_column(const KeyIsSet& is_set);
bool has_step_column(std::span<const Config> configs);
// "l" or "k": the column that holds the index of metric `metric` (a position in metric_table()).
std::string_view index_column(std::size_t metric);

// The CSV header line of `table` for a grid's configurations (with its newline).
std::string csv_header(ResultTable table, std::span<const Config> configs);
// The CSV fields of config c up to and including its last key column ("c,pre,layernorm,...,"), values as
// format_value writes them; columns: key_columns(set_in(grid.configs)).
std::string csv_key_fields(const Grid& grid, std::size_t c, const std::vector<std::string>& columns);
// The metric's name and its index in the l or k column, and the step where the file has that column:
// "act_sq,3,," or "cos_next,,3," (step < 0: no step column), "act_sq,3,,2,".
std::string csv_metric_fields(std::size_t metric, std::size_t index, int step = -1);

// One value of layers.csv.
struct LayerValue {
  std::size_t config = 0;
  int sample = 0, step = 0;
  std::size_t metric = 0, index = 0;
  double value = 0;
};
// Calls f(LayerValue) for every finite value, in file order: config, sample, step, metric (table order),
// index.
template <class F>
void for_each_layer_value(const GridRecords& records, F&& f) {
  for (std::size_t c = 0; c < records.size(); ++c)
    for (const auto& r : records[c])
      for (std::size_t m = 0; m < r.values.size(); ++m)
        for (std::size_t i = 0; i < r.values[m].size(); ++i)
          if (std::isfinite(r.values[m][i])) f(LayerValue{c, r.sample, r.step, m, i, r.values[m][i]});
}

// One row of summary.csv.
struct SummaryValue {
  std::size_t config = 0, metric = 0, index = 0;
  int step = 0;
  Summary summary;
};
// Calls f(SummaryValue) for every (config, step, metric, index) with a finite mean and se over at least one
// finite sample, in file order: config, step, metric (table order), index.
void for_each_summary(const GridRecords& records, const std::function<void(const SummaryValue&)>& f);

// One row of nonfinite.csv: a stream that first held a NaN or Inf (metric "": every metric from there on is
// missing), or a statistic that came out NaN or Inf from a finite stream (its metric and index).
struct NonFiniteRow {
  std::size_t config = 0;
  int sample = 0;
  std::string_view pass, metric;
  int layer = 0;
  int step = 0;
};
// Calls f(NonFiniteRow) for every row, in file order: config, sample, step, its statistics, then its stream.
void for_each_nonfinite(const GridRecords& records, const std::function<void(const NonFiniteRow&)>& f);
// nonfinite.csv's header, and one row as a line of it (every writer of the file uses both); a grid with steps
// (has_step_column) appends a `step` column.
inline constexpr std::string_view kNonFiniteHeader = "config,sample,pass,layer,metric\n";
inline constexpr std::string_view kNonFiniteStepHeader = "config,sample,pass,layer,metric,step\n";
std::string nonfinite_line(const NonFiniteRow& r, bool with_step = false);

}  // namespace normsim::sim
