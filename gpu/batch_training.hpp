// The training loop on the device (steps > 0) for one batch of S samples, the twin of sim/cpu/train_loop.hpp
// (its specification; docs/design/parametrization.md 3.5): for s = 0 .. steps, one pass of BatchRun on batch
// s (fixed: batch 0) that draws W_s through the optimizer (gpu/gpu_optimizer.hpp) and measures every asked
// metric at step s on the device, then, while s < steps, the optimizer's step from that pass's gradients.
// Each step's per-layer scalars come back with one synchronization and become records through
// sim::record_from_scalars, the CPU's code. A sample whose forward or backward was not finite at a step ends
// its training there, as on the CPU: its later steps' records hold no value (the device keeps running it
// with the batch, and its numbers are dropped).
#pragma once
#include <span>
#include <vector>

#include "gpu/blas.hpp"
#include "gpu/memory_plan.hpp"
#include "sim/placement.hpp"
#include "sim/record.hpp"
#include "sim/stack.hpp"

namespace normsim::gpu::inline NORMSIM_GPU_ABI {

// The records of steps 0 .. config.steps of each sample (one vector per sample, in step order), run with
// the plan's weights (kept or redrawn) and activations (whole tape or checkpointed).
template <class R>
std::vector<std::vector<sim::SampleRecord>> train_batch(const sim::Config& config,
                                                        const sim::StackShape& shape,
                                                        const sim::Placement& placement, const Blas& blas,
                                                        std::span<const int> samples, const MemoryPlan& plan);

}  // namespace normsim::gpu::inline NORMSIM_GPU_ABI
