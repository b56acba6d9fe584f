// Which Jacobian estimates a configuration's `metrics` ask for: the whole stack's (jac_sq, jac_spread, one
// reverse pass from x_K per probe) and the blocks' (block_identity_dev, one pass through each block per
// probe). One definition for the CPU backend, the unit planner, the key checks and the CUDA refusal.
#pragma once
#include "sim/metric_set.hpp"

namespace normsim::sim {

struct JacobianWanted {
  bool stack = false, blocks = false;

  static JacobianWanted of(const MetricSet& m) {
    return {m.contains(metric::jac_sq) || m.contains(metric::jac_spread),
            m.contains(metric::block_identity_dev)};
  }
  bool any() const { return stack || blocks; }
  // Reverse passes (each about one backward pass of the whole stack) the estimates cost per sample.
  int reverse_passes(int probes) const { return (int(stack) + int(blocks)) * probes; }
};

}  // namespace normsim::sim
