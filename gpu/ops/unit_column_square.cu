// Each column's square of summed unit token vectors (token_cos's numerator): the kernel and its launcher,
// declared with its reference in gpu/stat_ops.hpp.
#include "gpu/device_common.cuh"
#include "gpu/stat_ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// A block of kColumnTile x kTermRows threads per (sample, 32 columns): tiles of kColumnTile tokens, their
// terms x[s,t,c] / ||x[s,t]|| computed by every thread into shared memory, then summed down the tokens in
// order by the first warp, one column a thread: the twin's order, so the same numbers whatever the grid.
// One thread per column doing the whole sum (the first version) left W1's 2048 columns on 8 of 132 SMs, each
// thread a chain of T double divisions and square roots.
constexpr int kColumnTile = 32, kTermRows = 8;

template <class R>
__global__ void unit_column_square_kernel(const R* x, const double* row, int T, int d, double* out) {
  __shared__ double term[kColumnTile][kColumnTile];
  const std::size_t s = blockIdx.x;
  const int c = blockIdx.y * kColumnTile + threadIdx.x;
  double col = 0;
  for (int t0 = 0; t0 < T; t0 += kColumnTile) {
    for (int dt = threadIdx.y; dt < kColumnTile && t0 + dt < T && c < d; dt += kTermRows) {
      const std::size_t r = s * T + t0 + dt;
      term[dt][threadIdx.x] = double(x[r * d + c]) / sqrt(row[r * kRowStats + row_sq]);
    }
    __syncthreads();
    for (int dt = 0; threadIdx.y == 0 && c < d && dt < kColumnTile && t0 + dt < T; ++dt)
      col += term[dt][threadIdx.x];
    __syncthreads();
  }
  if (threadIdx.y == 0 && c < d) out[s * d + c] = col * col;
}

}  // namespace

template <class R>
void unit_column_square(const R* d_x, const double* d_row, int S, int T, int d, double* d_out) {
  if (S == 0 || d == 0) return;
  const dim3 grid(unsigned(S), unsigned((d + kColumnTile - 1) / kColumnTile)), block(kColumnTile, kTermRows);
  unit_column_square_kernel<<<grid, block>>>(d_x, d_row, T, d, d_out);
  check_launch("unit_column_square_kernel");
}

NORMSIM_INSTANTIATE_OP(unit_column_square)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
