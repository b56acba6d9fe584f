// What a branch is given and what it reports on every device: the sample it runs (SampleKey) and the norms
// of its weight gradients (WeightGradNorms). The CPU's branches (sim/cpu/cpu_branches.hpp) and the CUDA
// backend's (gpu/gpu_branches.hpp) both take these; a branch's part in a parameter update is each device's
// own (sim/cpu/update_hooks.hpp, gpu/gpu_branches.hpp's GpuContext).
#pragma once
#include <array>
#include <cstdint>

#include "sim/stack.hpp"

namespace normsim::sim {

struct SampleKey {
  std::uint64_t seed;
  std::uint32_t sample;
};

// Frobenius norms of the weight gradients of one sublayer, by WeightKind; NaN where the branch has none.
using WeightGradNorms = std::array<double, kWeightKinds>;

}  // namespace normsim::sim
