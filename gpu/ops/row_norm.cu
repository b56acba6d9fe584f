// The row norms (LayerNorm, RMSNorm), forward and backward: one block per row: the kernel and its launcher,
// declared with its reference in gpu/ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// One block per row: the two-pass mean/variance of sim::row_norm_forward, summed in double.
template <class R>
__global__ void row_norm_forward_kernel(const R* x, R* y, double* rstd, int n, sim::NormKind kind,
                                        double gain, double eps) {
  const R* xr = x + std::size_t(blockIdx.x) * n;
  R* yr = y + std::size_t(blockIdx.x) * n;
  double mean = 0.0;
  if (kind == sim::NormKind::layernorm) {
    double s = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += double(xr[i]);
    mean = block_sum(s) / n;
  }
  double ss = 0.0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const double c = double(xr[i]) - mean;
    ss += c * c;
  }
  const double rs = 1.0 / sqrt(block_sum(ss) / n + eps);
  for (int i = threadIdx.x; i < n; i += blockDim.x) yr[i] = R((double(xr[i]) - mean) * rs * gain);
  if (threadIdx.x == 0) rstd[blockIdx.x] = rs;
}

template <class R>
__global__ void row_norm_backward_kernel(const R* y, const R* dy, R* dx, const double* rstd, int n,
                                         sim::NormKind kind, double gain, bool accumulate) {
  const std::size_t o = std::size_t(blockIdx.x) * n;
  const double inv_gain = gain != 0.0 ? 1.0 / gain : 0.0;
  double sg = 0.0, sgx = 0.0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const double g = double(dy[o + i]) * gain;
    sg += g;
    sgx += g * double(y[o + i]) * inv_gain;
  }
  double mean_g = block_sum(sg) / n;
  const double mean_gx = block_sum(sgx) / n;
  if (kind == sim::NormKind::rmsnorm) mean_g = 0.0;
  const double rs = rstd[blockIdx.x];
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const double xhat = double(y[o + i]) * inv_gain;
    const R v = R(rs * (double(dy[o + i]) * gain - mean_g - xhat * mean_gx));
    dx[o + i] = accumulate ? dx[o + i] + v : v;
  }
}

}  // namespace

template <class R>
void row_norm_forward(const R* d_x, R* d_y, double* d_rstd, int rows, int n, sim::NormKind kind, double gain,
                      double eps) {
  if (rows == 0) return;
  row_norm_forward_kernel<<<rows, row_threads(n)>>>(d_x, d_y, d_rstd, n, kind, gain, eps);
  check_launch("row_norm_forward_kernel");
}

template <class R>
void row_norm_backward(const R* d_y, const R* d_dy, R* d_dx, const double* d_rstd, int rows, int n,
                       sim::NormKind kind, double gain, bool accumulate) {
  if (rows == 0) return;
  row_norm_backward_kernel<<<rows, row_threads(n)>>>(d_y, d_dy, d_dx, d_rstd, n, kind, gain, accumulate);
  check_launch("row_norm_backward_kernel");
}

NORMSIM_INSTANTIATE_OP(row_norm_forward)
NORMSIM_INSTANTIATE_OP(row_norm_backward)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
