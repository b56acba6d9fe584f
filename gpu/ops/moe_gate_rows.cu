// An expert's rows times its gate, and the gate's gradient (that product's backward): the kernel and its
// launcher, declared with its reference in gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
__global__ void moe_gate_rows_kernel(R* out, const R* g, const R* y, int rows, int n, int E, int e,
                                     bool accumulate) {
  NORMSIM_GRID_LOOP(j, std::size_t(rows) * n) {
    const R gate = g[(j / n) * E + e];
    out[j] = accumulate ? out[j] + gate * y[j] : gate * y[j];
  }
}

// One thread per row, the sum in index order in double, as the twin (rows = S x T tokens: few).
template <class R>
__global__ void moe_gate_gradient_kernel(const R* dout, const R* y, R* dg, int rows, int n, int E, int e) {
  NORMSIM_GRID_LOOP(r, std::size_t(rows)) {
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += double(dout[r * n + i]) * double(y[r * n + i]);
    dg[r * E + e] = R(sum);
  }
}

}  // namespace

template <class R>
void moe_gate_rows(R* d_out, const R* d_g, const R* d_y, int rows, int n, int E, int e, bool accumulate) {
  moe_gate_rows_kernel<<<grid_for(std::size_t(rows) * n), kThreads>>>(d_out, d_g, d_y, rows, n, E, e,
                                                                      accumulate);
  check_launch("moe_gate_rows_kernel");
}

template <class R>
void moe_gate_gradient(const R* d_dout, const R* d_y, R* d_dg, int rows, int n, int E, int e) {
  moe_gate_gradient_kernel<<<grid_for(std::size_t(rows)), kThreads>>>(d_dout, d_y, d_dg, rows, n, E, e);
  check_launch("moe_gate_gradient_kernel");
}

NORMSIM_INSTANTIATE_OP(moe_gate_rows)
NORMSIM_INSTANTIATE_OP(moe_gate_gradient)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
