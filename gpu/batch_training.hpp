// The training loop on the device (steps > 0) for one batch of S samples: the batch as the device of the
// training loop written once for every device (sim/training_loop.hpp: the steps, the records, where a
// sample's training ends). Each step is one pass of BatchRun on batch s (fixed: batch 0) that draws W_s
// through the optimizer (gpu/gpu_optimizer.hpp) and measures every asked metric at step s on the device;
// its per-layer scalars come back with one synchronization and become records through
// sim::record_from_scalars, the CPU's code. A sample whose pass was not finite runs on with the batch, and
// the loop drops its numbers.
#pragma once
#include <span>
#include <vector>

#include "gpu/blas.hpp"
#include "gpu/memory_plan.hpp"
#include "sim/placement.hpp"
#include "sim/record.hpp"
#include "sim/stack.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// The records of steps 0 .. config.steps of each sample (one vector per sample, in step order), run with
// the plan's weights (kept or redrawn) and activations (whole tape or checkpointed).
template <class R>
std::vector<std::vector<sim::SampleRecord>> train_batch(const sim::Config& config,
                                                        const sim::StackShape& shape,
                                                        const sim::Placement& placement, const Blas& blas,
                                                        std::span<const int> samples, const MemoryPlan& plan);

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
