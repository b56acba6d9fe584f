// The attention output gate, forward and backward: a thread per gate: the kernel and its launcher, declared
// with its reference in gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// One thread per gate (token r, gate j): its group of coordinates.
template <class R>
__global__ void attention_gate_forward_kernel(const R* o, const R* z, R* y, int rows, int d, int group) {
  const int G = d / group;
  NORMSIM_GRID_LOOP(i, std::size_t(rows) * G) {
    const std::size_t at = i / G * std::size_t(d) + i % G * std::size_t(group);
    sim::gate_forward_group(o + at, y + at, double(z[i]), group);
  }
}

template <class R>
__global__ void attention_gate_backward_kernel(const R* o, const R* z, const R* dy, R* d_o, R* dz, int rows,
                                               int d, int group) {
  const int G = d / group;
  NORMSIM_GRID_LOOP(i, std::size_t(rows) * G) {
    const std::size_t at = i / G * std::size_t(d) + i % G * std::size_t(group);
    dz[i] = R(sim::gate_backward_group(o + at, dy + at, d_o + at, double(z[i]), group));
  }
}

}  // namespace

template <class R>
void attention_gate_forward(const R* d_o, const R* d_z, R* d_y, int rows, int d, int group) {
  attention_gate_forward_kernel<<<grid_for(std::size_t(rows) * (d / group)), kThreads>>>(d_o, d_z, d_y, rows,
                                                                                         d, group);
  check_launch("attention_gate_forward_kernel");
}

template <class R>
void attention_gate_backward(const R* d_o, const R* d_z, const R* d_dy, R* d_do, R* d_dz, int rows, int d,
                             int group) {
  attention_gate_backward_kernel<<<grid_for(std::size_t(rows) * (d / group)), kThreads>>>(
      d_o, d_z, d_dy, d_do, d_dz, rows, d, group);
  check_launch("attention_gate_backward_kernel");
}

NORMSIM_INSTANTIATE_OP(attention_gate_forward)
NORMSIM_INSTANTIATE_OP(attention_gate_backward)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
