// The second forward pass of the metric output_change on the CPU: the same stack, inputs and placement state
// (Admin's omega held at its profiled value, as in training), every weight matrix W replaced by W + dW.
#pragma once
#include <cstdint>
#include <vector>

#include "sim/cpu/cpu_branches.hpp"
#include "sim/cpu/weight_update.hpp"
#include "sim/placement.hpp"
#include "sim/stream_metrics.hpp"

namespace normsim::sim {

// The tape's input of a sample on batch `batch`, in the backend's precision: x_0 (sim/inputs.hpp), or the
// embedding's input u (sim/edges.hpp).
template <class R>
Mat<R> input_matrix(const Config& config, SampleKey key, std::uint32_t batch = 0);

// The streams x'_0..x'_K with every W replaced by W + dW, on batch 0. `state` is the first pass's placement
// state (replayed here). loss_input, when given, receives what the loss reads (y', or the logits z').
template <class R>
std::vector<MatD> updated_stream_cpu(const StackShape& shape, const Placement& placement, SampleKey key,
                                     const ParameterUpdate<R>& update, PlacementState state,
                                     CpuWorkspace<R>& ws, MatD* loss_input = nullptr);

// The metric output_change: ||x'_l - x_l||^2 / ||x_l||^2 for every layer l both hold.
std::vector<double> relative_change(const std::vector<MatD>& updated, const std::vector<MatD>& stream);

}  // namespace normsim::sim
