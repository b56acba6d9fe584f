// The CUDA kernels of the backend and their launchers (declared in gpu/kernels.hpp). Per-element math
// comes from sim/ (NORMSIM_HD); row reductions run in double, like the CPU code they mirror.
#include <math_constants.h>

#include <algorithm>
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "gpu/cuda_check.hpp"
#include "gpu/device_common.cuh"
#include "gpu/kernels.hpp"
#include "sim/bf16_bits.hpp"
#include "sim/gaussian.hpp"
#include "sim/inputs.hpp"
#include "sim/moe_gate.hpp"
#include "sim/update_step.hpp"

namespace normsim::gpu {

namespace {

// One thread per Philox block: its four normals are computed once and written to the (up to) four entries
// they are (gaussian_at would compute the block once per entry). Out std::uint16_t: each entry's bf16 bits,
// rounded from the float32 that a float fill writes (sim::bf16_rounded_bits), so the same bits as
// gaussian_fill<float> followed by round_to_bf16, without the float32 pass.
template <class Out>
__global__ void gaussian_fill_kernel(Out* out, std::size_t n, int S, const std::uint32_t* samples,
                                     std::uint64_t seed, std::uint32_t layer, sim::Stream stream,
                                     float scale) {
  const std::size_t blocks = (n + 3) / 4;
  NORMSIM_GRID_LOOP(j, blocks * S) {
    const std::size_t s = j / blocks, b = j % blocks;
    float z[4];
    sim::gaussian_block(sim::DrawKey{seed, samples[s], layer, stream}, std::uint32_t(b), z);
    Out* o = out + s * n + 4 * b;
    for (std::size_t q = 0; q < 4 && 4 * b + q < n; ++q) {
      if constexpr (std::is_same_v<Out, std::uint16_t>)
        o[q] = Out(sim::bf16_rounded_bits(__float_as_uint(z[q] * scale)) >> 16);
      else
        o[q] = Out(z[q] * scale);
    }
  }
}

template <class R>
__global__ void input_fill_kernel(R* out, int S, const std::uint32_t* samples, int T, int d,
                                  std::uint64_t seed, double input_std, double rho, std::uint32_t batch) {
  const std::size_t per = std::size_t(T) * d;
  NORMSIM_GRID_LOOP(j, per * S) {
    const std::size_t s = j / per, r = j % per;
    out[j] = R(sim::input_entry(seed, samples[s], int(r / d), int(r % d), d, input_std, rho, batch));
  }
}

template <class R>
__global__ void token_onehot_fill_kernel(R* out, int S, const std::uint32_t* samples, int T, int vocab,
                                         std::uint64_t seed, std::uint32_t batch) {
  const std::size_t per = std::size_t(T) * vocab;
  NORMSIM_GRID_LOOP(j, per * S) {
    const std::size_t s = j / per, r = j % per;
    out[j] = R(sim::token_id(seed, samples[s], int(r / vocab), vocab, batch) == int(r % vocab) ? 1 : 0);
  }
}

template <class R>
__global__ void loss_gradient_kernel(const R* y, R* dy, int S, const std::uint32_t* samples, int T, int d,
                                     std::uint64_t seed, bool mse, std::uint32_t batch) {
  const std::size_t per = std::size_t(T) * d;
  NORMSIM_GRID_LOOP(j, per * S) {
    const std::size_t s = j / per, r = j % per;
    const int t = int(r / d), i = int(r % d);
    dy[j] = mse ? R(double(y[j]) - sim::target_entry(seed, samples[s], t, i, d, batch))
                : R(sim::readout_entry(seed, samples[s], t, i, d, batch));
  }
}

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

__global__ void round_to_bf16_kernel(const float* x, float* rounded, std::uint16_t* bits, std::size_t n) {
  NORMSIM_GRID_LOOP(i, n) {
    const std::uint32_t u = sim::bf16_rounded_bits(__float_as_uint(x[i]));
    if (rounded) rounded[i] = __uint_as_float(u);
    if (bits) bits[i] = std::uint16_t(u >> 16);
  }
}

template <class R>
__global__ void pointwise_norm_forward_kernel(const R* x, R* y, std::size_t n, sim::PointwiseNorm f) {
  NORMSIM_GRID_LOOP(i, n) y[i] = R(f(double(x[i])));
}

template <class R>
__global__ void pointwise_norm_backward_kernel(const R* x, const R* dy, R* dx, std::size_t n,
                                               sim::PointwiseNorm f, bool accumulate) {
  NORMSIM_GRID_LOOP(i, n) {
    const R v = R(double(dy[i]) * f.slope(double(x[i])));
    dx[i] = accumulate ? dx[i] + v : v;
  }
}

// One thread per vector (sample s, vector j) of S unit-norm weights (sim/unit_norm.hpp).
template <class R>
__global__ void unit_norm_vectors_kernel(R* w, int S, int rows, int cols, sim::UnitNorm u) {
  const int vectors = u.columns ? cols : rows;
  NORMSIM_GRID_LOOP(i, std::size_t(S) * vectors) {
    R* ws = w + i / vectors * std::size_t(rows) * cols;
    sim::normalize_weight_vector(ws, rows, cols, int(i % vectors), u);
  }
}

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

template <class R>
__global__ void activation_forward_kernel(const R* h, R* a, std::size_t n, sim::Activation act) {
  NORMSIM_GRID_LOOP(i, n) a[i] = sim::activate(act, h[i]);
}

template <class R>
__global__ void activation_backward_kernel(const R* h, const R* da, R* dh, std::size_t n,
                                           sim::Activation act) {
  NORMSIM_GRID_LOOP(i, n) dh[i] = da[i] * sim::activate_derivative(act, h[i]);
}

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

template <class R>
__global__ void swiglu_forward_kernel(const R* g, const R* h, R* a, std::size_t n) {
  NORMSIM_GRID_LOOP(i, n) a[i] = sim::activate(sim::Activation::silu, g[i]) * h[i];
}

template <class R>
__global__ void swiglu_backward_kernel(const R* g, const R* h, const R* da, R* dg, R* dh, std::size_t n) {
  NORMSIM_GRID_LOOP(i, n) {
    const R d = da[i], hv = h[i], gv = g[i];
    dg[i] = d * hv * sim::activate_derivative(sim::Activation::silu, gv);
    dh[i] = d * sim::activate(sim::Activation::silu, gv);
  }
}

template <class R>
__global__ void scaled_sum_kernel(R* out, const R* a, const double* s, const R* b, std::size_t n, int S,
                                  bool accumulate) {
  NORMSIM_GRID_LOOP(j, n * S) {
    R v = s ? R(a[j] * R(s[j / n])) : a[j];
    if (b) v += b[j];
    out[j] = accumulate ? out[j] + v : v;
  }
}

// One block per row.
template <class R>
__global__ void softmax_forward_kernel(R* sc, int T, bool causal) {
  R* row = sc + std::size_t(blockIdx.x) * T;
  const int last = causal ? int(blockIdx.x % T) : T - 1;
  R mx = -FLT_MAX;
  if (sizeof(R) == 8) mx = R(-DBL_MAX);
  for (int s = threadIdx.x; s <= last; s += blockDim.x) mx = max(mx, row[s]);
  mx = block_max(mx);
  double sum = 0;
  for (int s = threadIdx.x; s <= last; s += blockDim.x) sum += exp(double(row[s] - mx));
  sum = block_sum(sum);
  for (int s = threadIdx.x; s < T; s += blockDim.x)
    row[s] = s <= last ? R(exp(double(row[s] - mx)) / sum) : R(0);
}

template <class R>
__global__ void softmax_backward_kernel(const R* p, R* dp, int T, double scale) {
  const std::size_t o = std::size_t(blockIdx.x) * T;
  double dot = 0;
  for (int s = threadIdx.x; s < T; s += blockDim.x) dot += double(dp[o + s]) * double(p[o + s]);
  dot = block_sum(dot);
  for (int s = threadIdx.x; s < T; s += blockDim.x)
    dp[o + s] = R(R(double(p[o + s]) * (double(dp[o + s]) - dot)) * R(scale));
}

template <class R>
__global__ void sample_dot_kernel(const R* a, const R* b, std::size_t n, double* out) {
  const std::size_t o = std::size_t(blockIdx.x) * n;
  double acc = 0;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) acc += double(a[o + i]) * double(b[o + i]);
  acc = block_sum(acc);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

template <class R>
__global__ void sample_distance_sq_kernel(const R* a, const R* b, std::size_t n, double* out) {
  const std::size_t o = std::size_t(blockIdx.x) * n;
  double acc = 0;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) {
    const double e = double(a[o + i]) - double(b[o + i]);
    acc += e * e;
  }
  acc = block_sum(acc);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

template <class R>
__global__ void gradient_step_kernel(R* w, const R* g, std::size_t n, double lr, bool adam, double eps) {
  NORMSIM_GRID_LOOP(i, n) w[i] -= adam ? sim::adam_step(g[i], lr, eps) : sim::sgd_step(g[i], lr);
}

template <class R>
__global__ void adam_accumulate_kernel(const R* g, R* m, R* v, std::size_t n, double mult, sim::AdamStep a) {
  const R factor = R(mult);
  NORMSIM_GRID_LOOP(i, n) sim::adam_moments(R(g[i] * factor), m[i], v[i], a);
}

template <class R>
__global__ void adam_displace_kernel(R* disp, const R* m, const R* v, std::size_t n, double mult,
                                     sim::AdamStep a) {
  const R factor = R(mult);
  NORMSIM_GRID_LOOP(i, n) disp[i] -= sim::adam_displacement(m[i], v[i], a) * factor;
}

template <class R>
__global__ void sample_abs_distance_kernel(const R* a, const R* b, std::size_t n, double* out) {
  const std::size_t o = std::size_t(blockIdx.x) * n;
  double acc = 0;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x)
    acc += fabs(double(a[o + i]) - (b ? double(b[o + i]) : 0.0));
  acc = block_sum(acc);
  if (threadIdx.x == 0) out[blockIdx.x] = acc;
}

__global__ void random_update_scales_kernel(const double* w_sq, const double* g_sq, double scale,
                                            double* factor, int S) {
  NORMSIM_GRID_LOOP(s, std::size_t(S)) factor[s] = sim::random_update_scale(w_sq[s], g_sq[s], scale);
}

// Blocks (blockIdx.x the sample, gridDim.y per sample) over slices of a sample: each block's largest finite
// |a|, or NaN where it saw an entry that is not finite, merged into out[s] by an atomicMax on the bits. The
// bits of non-negative doubles order as their values, and the quiet NaN 0x7FF8... lies above +infinity's, so
// the merge is exact and the result the twin's whatever the grid (out[s] starts at +0: all bits clear).
template <class R>
__global__ void sample_max_abs_kernel(const R* a, std::size_t n, unsigned long long* out) {
  const std::size_t o = std::size_t(blockIdx.x) * n, stride = std::size_t(blockDim.x) * gridDim.y;
  double m = 0, bad = 0;
  for (std::size_t i = std::size_t(blockIdx.y) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double v = fabs(double(a[o + i]));
    if (isfinite(v))
      m = fmax(m, v);
    else
      bad += 1;
  }
  m = block_max(m);
  bad = block_sum(bad);
  if (threadIdx.x == 0)
    atomicMax(out + blockIdx.x,
              bad > 0 ? 0x7FF8'0000'0000'0000ull : (unsigned long long)__double_as_longlong(m));
}

__global__ void power_of_two_scales_kernel(const double* max_abs, double* factor, int S) {
  NORMSIM_GRID_LOOP(s, std::size_t(S)) {
    int e = 0;
    const bool scale = isfinite(max_abs[s]) && max_abs[s] > 0;
    if (scale) frexp(max_abs[s], &e);
    factor[s] = scale ? ldexp(1.0, -e) : 1.0;
  }
}

template <class R>
__global__ void swap_middle_axes_kernel(R* dst, const R* src, int A, int B, int n, std::size_t total) {
  NORMSIM_GRID_LOOP(i, total) {  // i indexes src (s, a, b, j): coalesced reads, runs of n contiguous writes
    const std::size_t j = i % n, r = i / n, b = r % B, a = (r / B) % A, s = r / (std::size_t(B) * A);
    dst[((s * B + b) * A + a) * n + j] = src[i];
  }
}

int row_threads(int n) {
  return n >= 512 ? 256 : (n >= 128 ? 128 : 32);
}

}  // namespace

namespace {
template <class Out>
void launch_gaussian_fill(Out* d_out, std::size_t n, int S, const std::uint32_t* d_samples,
                          std::uint64_t seed, std::uint32_t layer, sim::Stream stream, double scale) {
  gaussian_fill_kernel<<<grid_for((n + 3) / 4 * S), kThreads>>>(d_out, n, S, d_samples, seed, layer, stream,
                                                                float(scale));
  check_launch("gaussian_fill_kernel");
}
}  // namespace

template <class R>
void gaussian_fill(R* d_out, std::size_t n, int S, const std::uint32_t* d_samples, std::uint64_t seed,
                   std::uint32_t layer, sim::Stream stream, double scale) {
  launch_gaussian_fill(d_out, n, S, d_samples, seed, layer, stream, scale);
}

void gaussian_fill_bf16(std::uint16_t* d_bits, std::size_t n, int S, const std::uint32_t* d_samples,
                        std::uint64_t seed, std::uint32_t layer, sim::Stream stream, double scale) {
  launch_gaussian_fill(d_bits, n, S, d_samples, seed, layer, stream, scale);
}

template <class R>
void input_fill(R* d_out, int S, const std::uint32_t* d_samples, int T, int d, std::uint64_t seed,
                double input_std, double rho, std::uint32_t batch) {
  input_fill_kernel<<<grid_for(std::size_t(S) * T * d), kThreads>>>(d_out, S, d_samples, T, d, seed,
                                                                    input_std, rho, batch);
  check_launch("input_fill_kernel");
}

template <class R>
void token_onehot_fill(R* d_out, int S, const std::uint32_t* d_samples, int T, int vocab, std::uint64_t seed,
                       std::uint32_t batch) {
  token_onehot_fill_kernel<<<grid_for(std::size_t(S) * T * vocab), kThreads>>>(d_out, S, d_samples, T, vocab,
                                                                               seed, batch);
  check_launch("token_onehot_fill_kernel");
}

template <class R>
void loss_gradient(const R* d_y, R* d_dy, int S, const std::uint32_t* d_samples, int T, int d,
                   std::uint64_t seed, bool mse, std::uint32_t batch) {
  loss_gradient_kernel<<<grid_for(std::size_t(S) * T * d), kThreads>>>(d_y, d_dy, S, d_samples, T, d, seed,
                                                                       mse, batch);
  check_launch("loss_gradient_kernel");
}

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

void round_to_bf16(const float* d_x, float* d_rounded, std::uint16_t* d_bits, std::size_t n) {
  round_to_bf16_kernel<<<grid_for(n), kThreads>>>(d_x, d_rounded, d_bits, n);
  check_launch("round_to_bf16_kernel");
}

template <class R>
void pointwise_norm_forward(const R* d_x, R* d_y, std::size_t n, sim::PointwiseNorm f) {
  pointwise_norm_forward_kernel<<<grid_for(n), kThreads>>>(d_x, d_y, n, f);
  check_launch("pointwise_norm_forward_kernel");
}

template <class R>
void pointwise_norm_backward(const R* d_x, const R* d_dy, R* d_dx, std::size_t n, sim::PointwiseNorm f,
                             bool accumulate) {
  pointwise_norm_backward_kernel<<<grid_for(n), kThreads>>>(d_x, d_dy, d_dx, n, f, accumulate);
  check_launch("pointwise_norm_backward_kernel");
}

template <class R>
void unit_norm_vectors(R* d_w, int S, int rows, int cols, const sim::UnitNorm& u) {
  unit_norm_vectors_kernel<<<grid_for(std::size_t(S) * (u.columns ? cols : rows)), kThreads>>>(d_w, S, rows,
                                                                                               cols, u);
  check_launch("unit_norm_vectors_kernel");
}

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

template <class R>
void activation_forward(const R* d_h, R* d_a, std::size_t n, sim::Activation act) {
  activation_forward_kernel<<<grid_for(n), kThreads>>>(d_h, d_a, n, act);
  check_launch("activation_forward_kernel");
}

template <class R>
void activation_backward(const R* d_h, const R* d_da, R* d_dh, std::size_t n, sim::Activation act) {
  activation_backward_kernel<<<grid_for(n), kThreads>>>(d_h, d_da, d_dh, n, act);
  check_launch("activation_backward_kernel");
}

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

template <class R>
void swiglu_forward(const R* d_g, const R* d_h, R* d_a, std::size_t n) {
  swiglu_forward_kernel<<<grid_for(n), kThreads>>>(d_g, d_h, d_a, n);
  check_launch("swiglu_forward_kernel");
}

template <class R>
void swiglu_backward(const R* d_g, const R* d_h, const R* d_da, R* d_dg, R* d_dh, std::size_t n) {
  swiglu_backward_kernel<<<grid_for(n), kThreads>>>(d_g, d_h, d_da, d_dg, d_dh, n);
  check_launch("swiglu_backward_kernel");
}

template <class R>
void scaled_sum(R* d_out, const R* d_a, const double* d_s, const R* d_b, std::size_t n, int S,
                bool accumulate) {
  scaled_sum_kernel<<<grid_for(n * S), kThreads>>>(d_out, d_a, d_s, d_b, n, S, accumulate);
  check_launch("scaled_sum_kernel");
}

template <class R>
void softmax_forward(R* d_scores, int rows, int T, bool causal) {
  if (rows == 0) return;
  softmax_forward_kernel<<<rows, row_threads(T)>>>(d_scores, T, causal);
  check_launch("softmax_forward_kernel");
}

template <class R>
void softmax_backward(const R* d_p, R* d_dp, int rows, int T, double scale) {
  if (rows == 0) return;
  softmax_backward_kernel<<<rows, row_threads(T)>>>(d_p, d_dp, T, scale);
  check_launch("softmax_backward_kernel");
}

template <class R>
void sample_dot(const R* d_a, const R* d_b, std::size_t n, int S, double* d_out) {
  if (S == 0) return;
  sample_dot_kernel<<<S, 1024>>>(d_a, d_b, n, d_out);
  check_launch("sample_dot_kernel");
}

template <class R>
void swap_middle_axes(const R* d_src, R* d_dst, int S, int A, int B, int n) {
  const std::size_t total = std::size_t(S) * A * B * n;
  if (total == 0) return;
  swap_middle_axes_kernel<<<grid_for(total), kThreads>>>(d_dst, d_src, A, B, n, total);
  check_launch("swap_middle_axes_kernel");
}

// Enough blocks per sample to fill the device (about 16 entries a thread, at most 1024 blocks a sample): one
// block per sample (the first version) read W1's 32 K-entry slices from 4 of 132 SMs at 40 us a call.
template <class R>
void sample_max_abs(const R* d_a, std::size_t n, int S, double* d_out) {
  if (S == 0) return;
  NORMSIM_CUDA_CHECK(cudaMemsetAsync(d_out, 0, std::size_t(S) * sizeof(double), cudaStreamLegacy));
  const std::size_t per_block = std::size_t(kThreads) * 16;
  const unsigned blocks =
      unsigned(std::min<std::size_t>(std::max<std::size_t>((n + per_block - 1) / per_block, 1), 1024));
  sample_max_abs_kernel<<<dim3(unsigned(S), blocks), kThreads>>>(
      d_a, n, reinterpret_cast<unsigned long long*>(d_out));
  check_launch("sample_max_abs_kernel");
}

template <class R>
void sample_distance_sq(const R* d_a, const R* d_b, std::size_t n, int S, double* d_out) {
  if (S == 0) return;
  sample_distance_sq_kernel<<<S, 1024>>>(d_a, d_b, n, d_out);
  check_launch("sample_distance_sq_kernel");
}

template <class R>
void gradient_step(R* d_w, const R* d_g, std::size_t n, double lr, bool adam, double eps) {
  if (n == 0) return;
  gradient_step_kernel<<<grid_for(n), kThreads>>>(d_w, d_g, n, lr, adam, eps);
  check_launch("gradient_step_kernel");
}

template <class R>
void adam_accumulate(const R* d_g, R* d_m, R* d_v, std::size_t n, double mult, sim::AdamStep a) {
  if (n == 0) return;
  adam_accumulate_kernel<<<grid_for(n), kThreads>>>(d_g, d_m, d_v, n, mult, a);
  check_launch("adam_accumulate_kernel");
}

template <class R>
void adam_displace(R* d_disp, const R* d_m, const R* d_v, std::size_t n, double mult, sim::AdamStep a) {
  if (n == 0) return;
  adam_displace_kernel<<<grid_for(n), kThreads>>>(d_disp, d_m, d_v, n, mult, a);
  check_launch("adam_displace_kernel");
}

template <class R>
void sample_abs_distance(const R* d_a, const R* d_b, std::size_t n, int S, double* d_out) {
  if (S == 0) return;
  sample_abs_distance_kernel<<<S, 1024>>>(d_a, d_b, n, d_out);
  check_launch("sample_abs_distance_kernel");
}

void random_update_scales(const double* d_w_sq, const double* d_g_sq, double scale, double* d_factor, int S) {
  if (S == 0) return;
  random_update_scales_kernel<<<grid_for(std::size_t(S)), kThreads>>>(d_w_sq, d_g_sq, scale, d_factor, S);
  check_launch("random_update_scales_kernel");
}

void power_of_two_scales(const double* d_max_abs, double* d_factor, int S) {
  if (S == 0) return;
  power_of_two_scales_kernel<<<grid_for(std::size_t(S)), kThreads>>>(d_max_abs, d_factor, S);
  check_launch("power_of_two_scales_kernel");
}

NORMSIM_KERNEL_INSTANTIATIONS(float)
NORMSIM_KERNEL_INSTANTIATIONS(double)

}  // namespace normsim::gpu
