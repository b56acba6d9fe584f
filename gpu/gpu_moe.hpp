// A routed MLP (mixture of experts) on the device, for a batch of S samples: the twin of sim/cpu/cpu_moe.cpp,
// its specification. Cost model: every expert runs on every token of the batch, its output times a gate
// that is 0 where the token did not select it (the CPU skips an expert no token of its sample selects; the
// two agree wherever the expert's output is finite).
#pragma once
#include <memory>

#include "gpu/gpu_branches.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
std::unique_ptr<GpuBranch<R>> make_gpu_moe(const sim::StackShape& s, const sim::Placement& p, int k,
                                           const GpuContext<R>& ctx);

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
