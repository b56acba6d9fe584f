// The coordinate-check sizes of one training step's updates, per matrix (docs/metrics.md rows dwx_* and
// rel_dw_*; their definitions and measurement, written once for every device: sim/update_probe.hpp), as
// either backend hands them to a sample's record (sim/sample_metrics.hpp).
#pragma once
#include <array>
#include <vector>

#include "sim/stack.hpp"
#include "sim/stack_ops.hpp"

namespace normsim::sim {

// The sizes of one step, per sublayer by WeightKind and per edge matrix by Edge; NaN where not measured.
struct UpdateSizes {
  std::vector<std::array<double, kWeightKinds>> dwx, rel_dw;
  std::array<double, kEdges> edge_dwx, edge_rel_dw;
  explicit UpdateSizes(int depth = 0);
  // The sizes of matrix w of sublayer k, or of edge matrix w when k < 0 (a probe's key); sublayers past the
  // depth are not kept.
  void put(int k, int w, double dwx_value, double rel_dw_value);
};

}  // namespace normsim::sim
