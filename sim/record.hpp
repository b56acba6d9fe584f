// What one sample of one configuration produced: every metric at every layer, and where (if anywhere)
// a NaN or Inf first appeared. Backends fill these; the sweep writes them out.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace normsim::sim {

struct NonFinite {
  std::string pass;  // "forward" or "backward"
  int layer = 0;     // first stream index x_l (or its gradient) holding a NaN or Inf
};

// A statistic that came out NaN or Inf although the stream it is computed from was finite (a zero stream's
// cosine, an overflowing reduction): metric m (index into metric_table()) at layer/sublayer `layer`.
struct NonFiniteStatistic {
  int metric = 0;
  int layer = 0;
  int lane = -1;  // a block of n > 1 lanes: the lane whose statistic it is (-1: the record's `values`)
  friend bool operator==(const NonFiniteStatistic&, const NonFiniteStatistic&) = default;
};

struct SampleRecord {
  int sample = 0;
  // The training step the values were measured at (steps > 0, sim/cpu/train_loop.hpp); 0 at init and in a run
  // without steps.
  int step = 0;
  // values[m][i]: metric m (index into metric_table()) at layer/sublayer i. Non-finite or undefined
  // values are NaN here and are left out of every file.
  std::vector<std::vector<double>> values;
  // A block of n > 1 lanes (docs/design/multistream.md 3.3): lanes[i][m][i'] is metric m of lane i, indexed
  // as `values`, for the metrics measured per lane (sim/lane_metrics.hpp; the others are empty), while
  // `values` holds the lanes' mean's. Empty for one stream.
  std::vector<std::vector<std::vector<double>>> lanes;
  std::optional<NonFinite> nonfinite;
  std::vector<NonFiniteStatistic> nonfinite_statistics;  // in the order they were computed
};

}  // namespace normsim::sim
