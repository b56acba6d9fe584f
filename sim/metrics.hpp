// The table of per-layer metrics: name, whether it is indexed by stream (l = 0..K) or by sublayer
// (k = 0..K-1), and its exact definition. Adding a metric: docs/architecture.md §3.3.
#pragma once
#include <span>
#include <string_view>
#include <vector>

namespace normsim::sim {

enum class MetricIndex { stream, sublayer };
// The pass that computes a metric: a non-finite value is reported in nonfinite.csv under this pass.
enum class MetricPass { forward, backward };

struct MetricInfo {
  std::string_view name;
  MetricIndex index;
  MetricPass pass;
  std::string_view definition;
  // Costly metrics (a Jacobian, say) are computed only when a config's `metrics` key names them; the others
  // are the key's default (MetricSet::defaults).
  bool costly = false;
};

std::string_view pass_name(MetricPass pass);  // "forward", "backward"

// Every metric, in a fixed order; SampleRecord::values is indexed by position in this table.
std::span<const MetricInfo> metric_table();
// Position of a metric in metric_table(), or -1.
int metric_id(std::string_view name);

// Metric ids, fixed by the table's order.
namespace metric {
enum : int {
  act_sq,
  grad_sq,
  cos_next,
  token_cos,
  act_mean_abs,
  act_max_abs,
  branch_sq,
  rel_update,
  eff_rank,
  gradw_w1,
  gradw_w2,
  gradw_wgate,
  gradw_wq,
  gradw_wk,
  gradw_wv,
  gradw_wo,
  gradw_cq,
  gradw_ck,
  gradw_cv,
  gradw_co,
  gradw_wga,
  jac_sq,
  jac_spread,
  block_identity_dev,
  output_change,
  count
};
}  // namespace metric

}  // namespace normsim::sim
