// The table of per-layer metrics, the one place a metric's identity is written (its rows: vocab/metrics.def):
// its name, index (stream or sublayer), pass, cost, definition, figure symbol and axis, read by sim, gpu,
// theory, plots and Python (normsim._core.metrics()). Adding a metric: docs/architecture.md §3.3.
#pragma once
#include <array>
#include <span>
#include <string_view>

namespace normsim::vocab {

enum class MetricIndex { stream, sublayer };
// The pass that computes a metric: a non-finite value is reported in nonfinite.csv under this pass.
enum class MetricPass { forward, backward };
// The words of a row's cost and axis columns (vocab/metrics.def).
enum class MetricCost { cheap, costly };
enum class MetricAxis { linear, log };

struct MetricInfo {
  std::string_view name;
  MetricIndex index;
  MetricPass pass;
  // Costly metrics (a Jacobian, say) are computed only when a config's `metrics` key names them; the others
  // are the key's default (sim::MetricSet::defaults).
  bool costly;
  // Whether figures draw its values on a log axis (docs/figures.md, "Log or linear"): magnitudes.
  bool log_scale;
  std::string_view definition;
  std::string_view symbol;        // gnuplot enhanced text; "" where figures write the name
  std::string_view symbol_latex;  // the same in LaTeX
  std::string_view claim_names;   // plain-text names claims' axis labels use, "; " between them
};

// Metric ids: positions in metric_table(), generated from the same rows.
namespace metric {
enum : int {
#define NORMSIM_METRIC(name, ...) name,
#include "vocab/metrics.def"
#undef NORMSIM_METRIC
  count
};
}  // namespace metric

inline constexpr std::array<MetricInfo, metric::count> kMetricTable{{
#define NORMSIM_METRIC(name, index, pass, cost, axis, definition, symbol, symbol_latex, claim_names) \
  {#name,                                                                                            \
   MetricIndex::index,                                                                               \
   MetricPass::pass,                                                                                 \
   MetricCost::cost == MetricCost::costly,                                                           \
   MetricAxis::axis == MetricAxis::log,                                                              \
   definition,                                                                                       \
   symbol,                                                                                           \
   symbol_latex,                                                                                     \
   claim_names},
#include "vocab/metrics.def"
#undef NORMSIM_METRIC
}};

// Every metric, in a fixed order; sim::SampleRecord::values is indexed by position in this table.
constexpr std::span<const MetricInfo> metric_table() {
  return kMetricTable;
}

// Position of a metric in metric_table(), or -1.
constexpr int metric_id(std::string_view name) {
  for (int i = 0; i < metric::count; ++i)
    if (kMetricTable[std::size_t(i)].name == name) return i;
  return -1;
}

constexpr std::string_view pass_name(MetricPass pass) {  // "forward", "backward"
  return pass == MetricPass::forward ? "forward" : "backward";
}

// Names are unique: metric_id finds each row at its own position.
static_assert([] {
  for (int i = 0; i < metric::count; ++i)
    if (metric_id(kMetricTable[std::size_t(i)].name) != i) return false;
  return true;
}());

}  // namespace normsim::vocab
