// The statistics kernels and their launchers (gpu/stat_kernels.hpp); the CPU twins in gpu/stat_twins.hpp
// are their specification. Every sum is in double; block reductions change only the summation order.
#include <math_constants.h>

#include "gpu/device_common.cuh"
#include "gpu/stat_kernels.hpp"

namespace normsim::gpu {

namespace {

// One block per row: the row's sim::RowSums, each thread's entries added as every device adds them, the
// partial sums reduced across the block.
template <class R>
__global__ void row_stats_kernel(const R* x, const R* next, int n, double* out) {
  const std::size_t o = std::size_t(blockIdx.x) * n;
  sim::RowSums r;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    r.add(double(x[o + i]));
    if (next) r.add_pair(double(x[o + i]), double(next[o + i]));
  }
  r.each_sum([](double v) { return block_sum(v); });
  r.max_abs = block_max(r.max_abs);
  if (threadIdx.x == 0) r.store(out + std::size_t(blockIdx.x) * kRowStats, next != nullptr);
}

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

// One block per sample, threads over its tokens (and its columns' squares): the twin's sums, reduced
// across the block, finished as the twin finishes them.
__global__ void stream_stats_finish_kernel(const double* row, const double* colsq, int S, int T, int d,
                                           double* out) {
  const int s = blockIdx.x;
  sim::StreamSums m;
  for (int c = threadIdx.x; colsq && c < d; c += blockDim.x) m.columns += colsq[std::size_t(s) * d + c];
  for (int t = threadIdx.x; t < T; t += blockDim.x)
    sim::add_row_stats(m, row + (std::size_t(s) * T + t) * kRowStats);
  m.each_sum([](double v) { return block_sum(v); });
  m.max_abs = block_max(m.max_abs);
  if (threadIdx.x != 0) return;
  m.has_columns = colsq != nullptr;
  for (int f = 0; f < kStreamFields; ++f) out[f * S + s] = sim::finish_stream_field(f, m, T, d);
}

// With `factor`, entry i of sample i / per scaled in R first, as scaled_sum (gpu/kernels.cu) scales.
template <class R>
__global__ void widen_kernel(const R* x, const double* factor, std::size_t per, std::size_t n, double* out) {
  NORMSIM_GRID_LOOP(i, n) out[i] = factor ? double(R(x[i] * R(factor[i / per]))) : double(x[i]);
}

// One block per sample: two passes over its n eigenvalues (the total, then the entropy).
__global__ void spectral_effective_rank_kernel(const double* w, const int* info, int n, double* out) {
  const double* e = w + std::size_t(blockIdx.x) * n;
  double total = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) total += sqrt(fmax(e[i], 0.0));
  total = block_sum(total);
  double entropy = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const double p = sqrt(fmax(e[i], 0.0)) / total;
    if (p > 0) entropy -= p * log(p);
  }
  entropy = block_sum(entropy);
  if (threadIdx.x == 0) out[blockIdx.x] = info[blockIdx.x] != 0 || !(total > 0) ? CUDART_NAN : exp(entropy);
}

__global__ void frobenius_finish_kernel(const double* max_a, const double* max_b, const double* sum, int S,
                                        double* out) {
  NORMSIM_GRID_LOOP(s, std::size_t(S)) {
    const double ma = max_a[s], mb = max_b[s];
    int ea = 0, eb = 0;
    if (!isfinite(ma) || !isfinite(mb)) {
      out[s] = CUDART_NAN;
    } else if (ma == 0 || mb == 0) {
      out[s] = 0;
    } else {
      frexp(ma, &ea), frexp(mb, &eb);
      out[s] = ldexp(sqrt(sum[s] < 0 ? 0.0 : sum[s]), ea + eb);
    }
  }
}

int threads_for(int n) {
  return n >= 512 ? 256 : (n >= 128 ? 128 : 32);
}

}  // namespace

template <class R>
void row_stats(const R* d_x, const R* d_next, int rows, int n, double* d_out) {
  if (rows == 0) return;
  row_stats_kernel<<<rows, threads_for(n)>>>(d_x, d_next, n, d_out);
  check_launch("row_stats_kernel");
}

template <class R>
void unit_column_square(const R* d_x, const double* d_row, int S, int T, int d, double* d_out) {
  if (S == 0 || d == 0) return;
  const dim3 grid(unsigned(S), unsigned((d + kColumnTile - 1) / kColumnTile)), block(kColumnTile, kTermRows);
  unit_column_square_kernel<<<grid, block>>>(d_x, d_row, T, d, d_out);
  check_launch("unit_column_square_kernel");
}

void stream_stats_finish(const double* d_row, const double* d_colsq, int S, int T, int d, double* d_out) {
  if (S == 0) return;
  stream_stats_finish_kernel<<<S, threads_for(std::max(T, d))>>>(d_row, d_colsq, S, T, d, d_out);
  check_launch("stream_stats_finish_kernel");
}

template <class R>
void widen(const R* d_x, std::size_t n, double* d_out) {
  if (n == 0) return;
  widen_kernel<<<grid_for(n), kThreads>>>(d_x, static_cast<const double*>(nullptr), n, n, d_out);
  check_launch("widen_kernel");
}

template <class R>
void scaled_widen(const R* d_x, const double* d_factor, std::size_t n, int S, double* d_out) {
  if (n == 0 || S == 0) return;
  widen_kernel<<<grid_for(n * S), kThreads>>>(d_x, d_factor, n, n * S, d_out);
  check_launch("widen_kernel");
}

void spectral_effective_rank(const double* d_w, const int* d_info, int n, int S, double* d_out) {
  if (S == 0) return;
  spectral_effective_rank_kernel<<<S, threads_for(n)>>>(d_w, d_info, n, d_out);
  check_launch("spectral_effective_rank_kernel");
}

void frobenius_finish(const double* d_max_a, const double* d_max_b, const double* d_sum, int S,
                      double* d_out) {
  if (S == 0) return;
  frobenius_finish_kernel<<<grid_for(std::size_t(S)), kThreads>>>(d_max_a, d_max_b, d_sum, S, d_out);
  check_launch("frobenius_finish_kernel");
}

NORMSIM_STAT_KERNEL_INSTANTIATIONS(float)
NORMSIM_STAT_KERNEL_INSTANTIATIONS(double)

}  // namespace normsim::gpu
