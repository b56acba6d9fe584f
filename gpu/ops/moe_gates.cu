// A routed MLP's gates from its router logits, forward and backward: a thread per token row: the kernel and
// its launcher, declared with its reference in gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// A routed MLP's gates: one thread per token row (E logits; sim/moe_gate.hpp is the row's definition).
template <class R>
__global__ void moe_gates_kernel(const R* z, R* g, int rows, int E, int k, bool renormalized) {
  NORMSIM_GRID_LOOP(r, std::size_t(rows)) {
    sim::moe_gates(z + r * E, E, k, renormalized, g + r * E);
  }
}

template <class R>
__global__ void moe_gates_backward_kernel(const R* z, const R* dg, R* dz, int rows, int E, int k,
                                          bool renormalized) {
  NORMSIM_GRID_LOOP(r, std::size_t(rows)) {
    sim::moe_gates_backward(z + r * E, E, k, renormalized, dg + r * E, dz + r * E);
  }
}

}  // namespace

template <class R>
void moe_gates(const R* d_z, R* d_g, int rows, int E, int k, bool renormalized) {
  moe_gates_kernel<<<grid_for(std::size_t(rows)), kThreads>>>(d_z, d_g, rows, E, k, renormalized);
  check_launch("moe_gates_kernel");
}

template <class R>
void moe_gates_backward(const R* d_z, const R* d_dg, R* d_dz, int rows, int E, int k, bool renormalized) {
  moe_gates_backward_kernel<<<grid_for(std::size_t(rows)), kThreads>>>(d_z, d_dg, d_dz, rows, E, k,
                                                                       renormalized);
  check_launch("moe_gates_backward_kernel");
}

NORMSIM_INSTANTIATE_OP(moe_gates)
NORMSIM_INSTANTIATE_OP(moe_gates_backward)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
