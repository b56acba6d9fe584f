// Which metric each stream field stores (NORMSIM_STREAM_FIELDS, sim/stream_sums.hpp), as metric ids: the
// one table the CPU backend's measure and store (sim/sample_metrics.cpp) and the CUDA backend's reading of
// its field blocks (gpu/device_stats.cpp) go through, in field order.
#pragma once
#include "sim/metrics.hpp"
#include "sim/stream_sums.hpp"

namespace normsim::sim {

struct StreamFieldInfo {
  StreamField field;
  int metric;  // -1: not a metric (f_nonfinite, read as the stream's finiteness)
  bool pair;   // of x_l and x_{l+1}: stored at index l < K
  int min_tokens;
};

namespace stream_field_metric {
inline constexpr int none = -1;
using namespace vocab::metric;
}  // namespace stream_field_metric

inline constexpr StreamFieldInfo kStreamFieldTable[] = {
#define NORMSIM_FIELD_ROW(field, metric, pair, min_tokens, columns) \
  {field, stream_field_metric::metric, pair, min_tokens},
    NORMSIM_STREAM_FIELDS(NORMSIM_FIELD_ROW)
#undef NORMSIM_FIELD_ROW
};

}  // namespace normsim::sim
