// Which metrics a block of n > 1 lanes has per lane (docs/design/multistream.md 3.3): the stream metrics of
// x^i_l and the pair metrics of x^i_k and x^i_{k+1}, each also for the lanes' mean (SampleRecord::values);
// lane_cos is across the lanes; branch_sq and gradw_* belong to the sublayer, not to a lane.
#pragma once
#include "sim/metrics.hpp"
#include "sim/stream_fields.hpp"

namespace normsim::sim {

// Whether metric m (a position in metric_table()) is measured on every lane of a block of lanes: the stream
// fields' metrics (sim/stream_fields.hpp), eff_rank and grad_sq.
constexpr bool measured_per_lane(int m) {
  for (const StreamFieldInfo& f : kStreamFieldTable)
    if (f.metric >= 0 && f.metric == m) return true;
  return m == metric::eff_rank || m == metric::grad_sq;
}

// Whether metric m's value in a block of lanes is the lanes' mean's: the per-lane metrics and output_change
// (measured on the mean only). Its rows say lane `mean`; the others' lane is empty.
constexpr bool of_lanes_mean(int m) {
  return measured_per_lane(m) || m == metric::output_change;
}

}  // namespace normsim::sim
