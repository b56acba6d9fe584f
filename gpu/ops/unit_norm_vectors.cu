// NGPT's unit-norm weights, a thread per vector: the kernel and its launcher, declared with its reference in
// gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// One thread per vector (sample s, vector j) of S unit-norm weights (sim/unit_norm.hpp).
template <class R>
__global__ void unit_norm_vectors_kernel(R* w, int S, int rows, int cols, sim::UnitNorm u) {
  const int vectors = u.columns ? cols : rows;
  NORMSIM_GRID_LOOP(i, std::size_t(S) * vectors) {
    R* ws = w + i / vectors * std::size_t(rows) * cols;
    sim::normalize_weight_vector(ws, rows, cols, int(i % vectors), u);
  }
}

}  // namespace

template <class R>
void unit_norm_vectors(R* d_w, int S, int rows, int cols, const sim::UnitNorm& u) {
  unit_norm_vectors_kernel<<<grid_for(std::size_t(S) * (u.columns ? cols : rows)), kThreads>>>(d_w, S, rows,
                                                                                               cols, u);
  check_launch("unit_norm_vectors_kernel");
}

NORMSIM_INSTANTIATE_OP(unit_norm_vectors)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
