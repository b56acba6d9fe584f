// One pass of a sample on the CPU backend: the forward on a batch, and, when a backward metric or the
// parameter update asks for it, the loss's backward with the Jacobian probes. The one update of steps = 0
// (sim/cpu/cpu_backend.cpp) runs it once and then its updated forward (sim/cpu/update_pass.hpp); the training
// loop (sim/cpu/train_loop.hpp) runs it once per step.
#pragma once
#include <cstdint>

#include "sim/cpu/cpu_branches.hpp"
#include "sim/placement.hpp"
#include "sim/sample_metrics.hpp"

namespace normsim::sim {

struct PassTensors {
  SampleTensors tensors;  // output_change left empty: the caller measures it
  bool forward_ok = false, backward_ok = false;
  MatD loss_input;  // what the loss reads: y, or the logits z = y W_out (sim/edges.hpp)
};

// The pass on batch `batch` (sim/inputs.hpp) with W + dW drawn through hooks.apply and the loss's gradients
// recorded into hooks.record (which is sealed after the loss's backward). `state` is the placement's state:
// filled by a first pass, replayed where state.replay is set.
template <class R>
PassTensors run_pass(const StackShape& shape, const Placement& placement, SampleKey key, std::uint32_t batch,
                     UpdateHooks<R> hooks, PlacementState& state, CpuWorkspace<R>& ws);

}  // namespace normsim::sim
