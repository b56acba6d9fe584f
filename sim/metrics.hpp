// The per-layer metrics under the simulator's names: the table and its ids are vocab/metrics.hpp (rows in
// vocab/metrics.def); sim::metric::act_sq is vocab::metric::act_sq. Adding a metric: docs/architecture.md
// §3.3.
#pragma once
#include "vocab/metrics.hpp"

namespace normsim::sim {

using vocab::metric_id;
using vocab::metric_table;
using vocab::MetricIndex;
using vocab::MetricInfo;
using vocab::MetricPass;
using vocab::pass_name;
namespace metric = vocab::metric;

// Whether metric m is one of the training loop's coordinate-check metrics (dwx_*, rel_dw_*, logit_*: the rows
// from dwx_w1 to logit_change in vocab/metrics.def), which only a run with steps >= 1 measures.
constexpr bool is_train_metric(int m) {
  return m >= metric::dwx_w1 && m <= metric::logit_change;
}

}  // namespace normsim::sim
