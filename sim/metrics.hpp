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

}  // namespace normsim::sim
