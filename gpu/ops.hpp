// Every GPU op of the backend but the statistics (gpu/stat_ops.hpp): its reference `cpu::foo`, plain loops
// over host pointers and the per-element code in sim/ (the specification the kernel is tested on:
// docs/architecture.md §4), and below it its launcher `foo`, declared once by NORMSIM_GPU_OP (gpu/op.hpp)
// with the same parameters over device pointers. The launcher runs `foo_kernel` on the default stream; both
// live in gpu/ops/ (one .cu file per op, or per forward/backward pair); tests/gpu/test_gpu_ops.cpp compares
// each launcher with its reference. Plain C++: the callers include it.
// Layout: a batch of S samples, sample-major (S x T x d for activations, S x fan_in x fan_out for weights).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "gpu/op.hpp"
#include "sim/activations.hpp"
#include "sim/attention_gate.hpp"
#include "sim/bf16_bits.hpp"
#include "sim/gaussian.hpp"
#include "sim/inputs.hpp"
#include "sim/moe_gate.hpp"
#include "sim/philox.hpp"
#include "sim/pointwise_norm.hpp"
#include "sim/rownorm.hpp"
#include "sim/softmax.hpp"
#include "sim/statistic_finish.hpp"
#include "sim/unit_norm.hpp"
#include "sim/update_step.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// out[s*n + i] = gaussian_at({seed, samples[s], layer, stream}, i) * float(scale). Not bit-identical to the
// CPU backend's weights (sim::fill_gaussian, vectorized Eigen log/sin/cos): they differ by up to a few float
// ulps (tests/gpu/test_draw_agreement.cpp measures it), plus the device's logf/sinf/cosf (<= 2 ulps).
namespace cpu {
template <class R>
void gaussian_fill(R* out, std::size_t n, int S, const std::uint32_t* samples, std::uint64_t seed,
                   std::uint32_t layer, sim::Stream stream, double scale) {
  for (int s = 0; s < S; ++s) {
    const sim::DrawKey key{seed, samples[s], layer, stream};
    for (std::size_t i = 0; i < n; ++i) out[s * n + i] = R(sim::gaussian_at(key, i) * float(scale));
  }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(gaussian_fill,
                 (R * d_out, std::size_t n, int S, const std::uint32_t* d_samples, std::uint64_t seed,
                  std::uint32_t layer, sim::Stream stream, double scale),
                 (d_out, n, S, d_samples, seed, layer, stream, scale));

// precision = "bf16" (sim/bf16.hpp): each x[i] rounded to bf16 (sim/bf16_bits.hpp), as a float into
// d_rounded (which may alias d_x) and as its 16 bits into d_bits (a CUDA_R_16BF operand), each where not
// null.
namespace cpu {
inline void round_to_bf16(const float* x, float* rounded, std::uint16_t* bits, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, &x[i], 4);
    u = sim::bf16_rounded_bits(u);
    if (rounded) std::memcpy(&rounded[i], &u, 4);
    if (bits) bits[i] = std::uint16_t(u >> 16);
  }
}
}  // namespace cpu
NORMSIM_GPU_OP(round_to_bf16, (const float* d_x, float* d_rounded, std::uint16_t* d_bits, std::size_t n),
               (d_x, d_rounded, d_bits, n));

// precision = "bf16": the same draw's bf16 bits (a CUDA_R_16BF operand), each rounded from the float32
// gaussian_fill<float> writes (sim/bf16_bits.hpp): bit for bit gaussian_fill<float> then round_to_bf16, in
// one pass that writes 2 bytes an entry instead of writing 4, reading them back and writing 2.
namespace cpu {
// gaussian_fill<float>'s entries, each rounded by round_to_bf16: the specification of the fused kernel.
inline void gaussian_fill_bf16(std::uint16_t* bits, std::size_t n, int S, const std::uint32_t* samples,
                               std::uint64_t seed, std::uint32_t layer, sim::Stream stream, double scale) {
  for (int s = 0; s < S; ++s) {
    const sim::DrawKey key{seed, samples[s], layer, stream};
    for (std::size_t i = 0; i < n; ++i) {
      const float x = sim::gaussian_at(key, i) * float(scale);
      round_to_bf16(&x, nullptr, bits + s * n + i, 1);
    }
  }
}
}  // namespace cpu
NORMSIM_GPU_OP(gaussian_fill_bf16,
               (std::uint16_t * d_bits, std::size_t n, int S, const std::uint32_t* d_samples,
                std::uint64_t seed, std::uint32_t layer, sim::Stream stream, double scale),
               (d_bits, n, S, d_samples, seed, layer, stream, scale));

// x_0 of every sample (sim/inputs.hpp's input_entry) on batch `batch` (the training loop's fresh batches;
// 0 = a run without steps), S x T x d.
namespace cpu {
template <class R>
void input_fill(R* out, int S, const std::uint32_t* samples, int T, int d, std::uint64_t seed,
                double input_std, double rho, std::uint32_t batch = 0) {
  for (int s = 0; s < S; ++s)
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < d; ++i)
        out[(std::size_t(s) * T + t) * d + i] =
            R(sim::input_entry(seed, samples[s], t, i, d, input_std, rho, batch));
}
}  // namespace cpu
NORMSIM_GPU_OP_T(input_fill,
                 (R * d_out, int S, const std::uint32_t* d_samples, int T, int d, std::uint64_t seed,
                  double input_std, double rho, std::uint32_t batch = 0),
                 (d_out, S, d_samples, T, d, seed, input_std, rho, batch));

// The embedding's input of token ids (sim/edges.hpp): S x T x vocab one-hot rows, row t's 1 at
// sim::token_id(seed, sample, t, vocab, batch).
namespace cpu {
template <class R>
void token_onehot_fill(R* out, int S, const std::uint32_t* samples, int T, int vocab, std::uint64_t seed,
                       std::uint32_t batch = 0) {
  for (int s = 0; s < S; ++s)
    for (int t = 0; t < T; ++t)
      for (int v = 0; v < vocab; ++v)
        out[(std::size_t(s) * T + t) * vocab + v] =
            R(sim::token_id(seed, samples[s], t, vocab, batch) == v ? 1 : 0);
}
}  // namespace cpu
NORMSIM_GPU_OP_T(token_onehot_fill,
                 (R * d_out, int S, const std::uint32_t* d_samples, int T, int vocab, std::uint64_t seed,
                  std::uint32_t batch = 0),
                 (d_out, S, d_samples, T, vocab, seed, batch));

// dLoss/dy on batch `batch`: readout (g) or mse (y - target), S x T x d.
namespace cpu {
template <class R>
void loss_gradient(const R* y, R* dy, int S, const std::uint32_t* samples, int T, int d, std::uint64_t seed,
                   bool mse, std::uint32_t batch = 0) {
  for (int s = 0; s < S; ++s)
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < d; ++i) {
        const std::size_t j = (std::size_t(s) * T + t) * d + i;
        dy[j] = mse ? R(double(y[j]) - sim::target_entry(seed, samples[s], t, i, d, batch))
                    : R(sim::readout_entry(seed, samples[s], t, i, d, batch));
      }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(loss_gradient,
                 (const R* d_y, R* d_dy, int S, const std::uint32_t* d_samples, int T, int d,
                  std::uint64_t seed, bool mse, std::uint32_t batch = 0),
                 (d_y, d_dy, S, d_samples, T, d, seed, mse, batch));

// Row norm of `rows` contiguous rows of length n (sim/rownorm.hpp); rstd[row] is kept for the backward.
namespace cpu {
template <class R>
void row_norm_forward(const R* x, R* y, double* rstd, int rows, int n, sim::NormKind kind, double gain,
                      double eps) {
  for (int r = 0; r < rows; ++r)
    rstd[r] = sim::row_norm_forward(kind, x + std::size_t(r) * n, y + std::size_t(r) * n, n, gain, eps);
}
// dx (= or += when accumulate) from the forward output y and the incoming dy; dx may alias dy.

template <class R>
void row_norm_backward(const R* y, const R* dy, R* dx, const double* rstd, int rows, int n,
                       sim::NormKind kind, double gain, bool accumulate) {
  for (int r = 0; r < rows; ++r) {
    const std::size_t o = std::size_t(r) * n;
    sim::row_norm_backward(kind, y + o, dy + o, dx + o, n, gain, rstd[r], accumulate);
  }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(row_norm_forward,
                 (const R* d_x, R* d_y, double* d_rstd, int rows, int n, sim::NormKind kind, double gain,
                  double eps),
                 (d_x, d_y, d_rstd, rows, n, kind, gain, eps));
NORMSIM_GPU_OP_T(row_norm_backward,
                 (const R* d_y, const R* d_dy, R* d_dx, const double* d_rstd, int rows, int n,
                  sim::NormKind kind, double gain, bool accumulate),
                 (d_y, d_dy, d_dx, d_rstd, rows, n, kind, gain, accumulate));

// DyT or Derf (sim/pointwise_norm.hpp) entry by entry: y = f(x); dx (= or += when accumulate) = dy f'(x).
namespace cpu {
template <class R>
void pointwise_norm_forward(const R* x, R* y, std::size_t n, sim::PointwiseNorm f) {
  for (std::size_t i = 0; i < n; ++i) y[i] = R(f(double(x[i])));
}

template <class R>
void pointwise_norm_backward(const R* x, const R* dy, R* dx, std::size_t n, sim::PointwiseNorm f,
                             bool accumulate) {
  for (std::size_t i = 0; i < n; ++i) {
    const R v = R(double(dy[i]) * f.slope(double(x[i])));
    dx[i] = accumulate ? dx[i] + v : v;
  }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(pointwise_norm_forward, (const R* d_x, R* d_y, std::size_t n, sim::PointwiseNorm f),
                 (d_x, d_y, n, f));
NORMSIM_GPU_OP_T(pointwise_norm_backward,
                 (const R* d_x, const R* d_dy, R* d_dx, std::size_t n, sim::PointwiseNorm f, bool accumulate),
                 (d_x, d_dy, d_dx, n, f, accumulate));

// a = act(h); dh = da * act'(h) (dh may alias da).
namespace cpu {
template <class R>
void activation_forward(const R* h, R* a, std::size_t n, sim::Activation act) {
  for (std::size_t i = 0; i < n; ++i) a[i] = sim::activate(act, h[i]);
}

template <class R>
void activation_backward(const R* h, const R* da, R* dh, std::size_t n, sim::Activation act) {
  for (std::size_t i = 0; i < n; ++i) dh[i] = da[i] * sim::activate_derivative(act, h[i]);
}
// SwiGLU: a = silu(g) * h; dg = da * h * silu'(g), dh = da * silu(g) (dg, dh may alias da, not each other).

template <class R>
void swiglu_forward(const R* g, const R* h, R* a, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) a[i] = sim::activate(sim::Activation::silu, g[i]) * h[i];
}

template <class R>
void swiglu_backward(const R* g, const R* h, const R* da, R* dg, R* dh, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const R d = da[i], hv = h[i], gv = g[i];
    dg[i] = d * hv * sim::activate_derivative(sim::Activation::silu, gv);
    dh[i] = d * sim::activate(sim::Activation::silu, gv);
  }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(activation_forward, (const R* d_h, R* d_a, std::size_t n, sim::Activation act),
                 (d_h, d_a, n, act));
NORMSIM_GPU_OP_T(activation_backward,
                 (const R* d_h, const R* d_da, R* d_dh, std::size_t n, sim::Activation act),
                 (d_h, d_da, d_dh, n, act));
NORMSIM_GPU_OP_T(swiglu_forward, (const R* d_g, const R* d_h, R* d_a, std::size_t n), (d_g, d_h, d_a, n));
NORMSIM_GPU_OP_T(swiglu_backward,
                 (const R* d_g, const R* d_h, const R* d_da, R* d_dg, R* d_dh, std::size_t n),
                 (d_g, d_h, d_da, d_dg, d_dh, n));

// The attention output gate (sim/attention_gate.hpp) over `rows` tokens of d coordinates, G = d / group gates
// each: y = o * sigmoid(z) (z rows x G); its backward d_o = dy * sigmoid(z) (d_o may alias dy) and
// dz = sigmoid'(z) * (the sum of dy * o over the gate's coordinates).
namespace cpu {
template <class R>
void attention_gate_forward(const R* o, const R* z, R* y, int rows, int d, int group) {
  const int G = d / group;
  for (std::size_t i = 0; i < std::size_t(rows) * G; ++i) {
    const std::size_t at = i / G * std::size_t(d) + i % G * std::size_t(group);
    sim::gate_forward_group(o + at, y + at, double(z[i]), group);
  }
}

template <class R>
void attention_gate_backward(const R* o, const R* z, const R* dy, R* d_o, R* dz, int rows, int d, int group) {
  const int G = d / group;
  for (std::size_t i = 0; i < std::size_t(rows) * G; ++i) {
    const std::size_t at = i / G * std::size_t(d) + i % G * std::size_t(group);
    dz[i] = R(sim::gate_backward_group(o + at, dy + at, d_o + at, double(z[i]), group));
  }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(attention_gate_forward, (const R* d_o, const R* d_z, R* d_y, int rows, int d, int group),
                 (d_o, d_z, d_y, rows, d, group));
NORMSIM_GPU_OP_T(attention_gate_backward,
                 (const R* d_o, const R* d_z, const R* d_dy, R* d_do, R* d_dz, int rows, int d, int group),
                 (d_o, d_z, d_dy, d_do, d_dz, rows, d, group));

// nGPT's unit-norm weights (sim/unit_norm.hpp): every column (u.columns) or row of S matrices (rows x cols,
// row-major, one after the other) rescaled in place to length u.length.
namespace cpu {
template <class R>
void unit_norm_vectors(R* w, int S, int rows, int cols, const sim::UnitNorm& u) {
  for (int s = 0; s < S; ++s) sim::normalize_weight(w + std::size_t(s) * rows * cols, rows, cols, u);
}
}  // namespace cpu
NORMSIM_GPU_OP_T(unit_norm_vectors, (R * d_w, int S, int rows, int cols, const sim::UnitNorm& u),
                 (d_w, S, rows, cols, u));

// out = [out +] a * s[sample] [+ b] over S samples of n entries; s (S doubles) and b may be null.
namespace cpu {
template <class R>
void scaled_sum(R* out, const R* a, const double* s, const R* b, std::size_t n, int S, bool accumulate) {
  for (int k = 0; k < S; ++k)
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t j = std::size_t(k) * n + i;
      R v = s ? R(a[j] * R(s[k])) : a[j];
      if (b) v += b[j];
      out[j] = accumulate ? out[j] + v : v;
    }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(scaled_sum,
                 (R * d_out, const R* d_a, const double* d_s, const R* d_b, std::size_t n, int S,
                  bool accumulate),
                 (d_out, d_a, d_s, d_b, n, S, accumulate));

// In place, row by row: softmax of `rows` rows of length T (row r is query t = r % T; causal: s <= t
// kept, the rest 0). Sums in double, as the CPU branch.
namespace cpu {
template <class R>
void softmax_forward(R* sc, int rows, int T, bool causal) {
  for (int r = 0; r < rows; ++r) sim::softmax_row(sc + std::size_t(r) * T, T, causal ? r % T : T - 1);
}
// In place: dP := P * (dP - sum_s dP P) * scale (the softmax backward times 1/sqrt(d_head)).

template <class R>
void softmax_backward(const R* p, R* dp, int rows, int T, double scale) {
  for (int r = 0; r < rows; ++r)
    sim::softmax_backward_row(p + std::size_t(r) * T, dp + std::size_t(r) * T, T, scale);
}
}  // namespace cpu
NORMSIM_GPU_OP_T(softmax_forward, (R * d_scores, int rows, int T, bool causal), (d_scores, rows, T, causal));
NORMSIM_GPU_OP_T(softmax_backward, (const R* d_p, R* d_dp, int rows, int T, double scale),
                 (d_p, d_dp, rows, T, scale));

// A routed MLP (sim/moe_gate.hpp, gpu/gpu_moe.cpp), rows = S x T tokens of E router logits each:
// g = the gates of z, row by row; dz = their backward from dg (the selection held fixed).
namespace cpu {
template <class R>
void moe_gates(const R* z, R* g, int rows, int E, int k, bool renormalized) {
  for (int r = 0; r < rows; ++r)
    sim::moe_gates(z + std::size_t(r) * E, E, k, renormalized, g + std::size_t(r) * E);
}

template <class R>
void moe_gates_backward(const R* z, const R* dg, R* dz, int rows, int E, int k, bool renormalized) {
  for (int r = 0; r < rows; ++r) {
    const std::size_t o = std::size_t(r) * E;
    sim::moe_gates_backward(z + o, E, k, renormalized, dg + o, dz + o);
  }
}
// out[r, :] = [out[r, :] +] g[r, e] y[r, :] over rows of n (g: rows x E): an expert's gated output, or the
// output gradient an expert receives.

template <class R>
void moe_gate_rows(R* out, const R* g, const R* y, int rows, int n, int E, int e, bool accumulate) {
  for (int r = 0; r < rows; ++r) {
    const R gate = g[std::size_t(r) * E + e];
    for (int i = 0; i < n; ++i) {
      const std::size_t j = std::size_t(r) * n + i;
      out[j] = accumulate ? out[j] + gate * y[j] : gate * y[j];
    }
  }
}
// dg[r, e] = sum_i dout[r, i] y[r, i] in double (dg: rows x E): dLoss / d gate of expert e.

template <class R>
void moe_gate_gradient(const R* dout, const R* y, R* dg, int rows, int n, int E, int e) {
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int i = 0; i < n; ++i)
      sum += double(dout[std::size_t(r) * n + i]) * double(y[std::size_t(r) * n + i]);
    dg[std::size_t(r) * E + e] = R(sum);
  }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(moe_gates, (const R* d_z, R* d_g, int rows, int E, int k, bool renormalized),
                 (d_z, d_g, rows, E, k, renormalized));
NORMSIM_GPU_OP_T(moe_gates_backward,
                 (const R* d_z, const R* d_dg, R* d_dz, int rows, int E, int k, bool renormalized),
                 (d_z, d_dg, d_dz, rows, E, k, renormalized));
NORMSIM_GPU_OP_T(moe_gate_rows,
                 (R * d_out, const R* d_g, const R* d_y, int rows, int n, int E, int e, bool accumulate),
                 (d_out, d_g, d_y, rows, n, E, e, accumulate));
NORMSIM_GPU_OP_T(moe_gate_gradient, (const R* d_dout, const R* d_y, R* d_dg, int rows, int n, int E, int e),
                 (d_dout, d_y, d_dg, rows, n, E, e));

// The operands of gemm's slices for cuBLAS's pointer-array call (gpu/blas.cpp): for item i < items and slice
// j < slices, q = i slices + j and N = items slices, ptr[q] = a + i sa + j a_step, ptr[N + q] = b + i sb +
// j b_step, ptr[2N + q] = parts + q part. Pointers are only computed, never read through: exact.
namespace cpu {
template <class R>
void slice_pointers(const R** ptr, const R* a, long long sa, long long a_step, const R* b, long long sb,
                    long long b_step, const R* parts, long long part, int items, int slices) {
  const long long N = (long long)items * slices;
  for (long long q = 0; q < N; ++q) {
    const long long i = q / slices, j = q % slices;
    ptr[q] = a + (i * sa + j * a_step);
    ptr[N + q] = b + (i * sb + j * b_step);
    ptr[2 * N + q] = parts + q * part;
  }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(slice_pointers,
                 (const R** d_ptr, const R* a, long long sa, long long a_step, const R* b, long long sb,
                  long long b_step, const R* parts, long long part, int items, int slices),
                 (d_ptr, a, sa, a_step, b, sb, b_step, parts, part, items, slices));

// The inner dimension's slices of a product summed (gemm in gpu/blas.cpp): for each of `items` items,
// c[i*stride_c + r*ldc + j] = [c +] sum over s of parts[((i*slices + s)*m + r)*n + j], summed in double in
// the order of s and rounded once to R (c is read only when accumulating). Exact on both sides: the same
// additions in the same order.
namespace cpu {
template <class R>
void sum_slices(R* c, const R* parts, int slices, int items, int m, int n, int ldc, long long stride_c,
                bool accumulate) {
  const std::size_t part = std::size_t(m) * n;
  for (int i = 0; i < items; ++i)
    for (int r = 0; r < m; ++r)
      for (int j = 0; j < n; ++j) {
        R& out = c[std::size_t(i) * stride_c + std::size_t(r) * ldc + j];
        double acc = accumulate ? double(out) : 0.0;
        for (int s = 0; s < slices; ++s)
          acc += double(parts[(std::size_t(i) * slices + s) * part + std::size_t(r) * n + j]);
        out = R(acc);
      }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(sum_slices,
                 (R * d_c, const R* d_parts, int slices, int items, int m, int n, int ldc, long long stride_c,
                  bool accumulate),
                 (d_c, d_parts, slices, items, m, n, ldc, stride_c, accumulate));

// out[s] = sum_i a[s*n+i] * b[s*n+i] in double (one block per sample: deterministic order).
namespace cpu {
template <class R>
void sample_dot(const R* a, const R* b, std::size_t n, int S, double* out) {
  for (int s = 0; s < S; ++s) {
    double acc = 0;
    for (std::size_t i = 0; i < n; ++i) acc += double(a[s * n + i]) * double(b[s * n + i]);
    out[s] = acc;
  }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(sample_dot, (const R* d_a, const R* d_b, std::size_t n, int S, double* d_out),
                 (d_a, d_b, n, S, d_out));

// out[s] = max_i |a[s*n+i]| in double, NaN when any entry of the sample is NaN or infinite (exact: the same
// value whatever the launch's grid).
namespace cpu {
template <class R>
void sample_max_abs(const R* a, std::size_t n, int S, double* out) {
  for (int s = 0; s < S; ++s) {
    double m = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double v = std::abs(double(a[s * n + i]));
      m = std::isfinite(v) ? std::max(m, v) : std::numeric_limits<double>::quiet_NaN();
      if (std::isnan(m)) break;
    }
    out[s] = m;
  }
}
// factor[s] = sim::power_of_two_scale(max_abs[s]): 2^-e with max_abs[s] = m 2^e, 0.5 <= m < 1
// (std::frexp), which scales sample s to max|x| in [0.5, 1) exactly; 1 where max_abs[s] is 0 or not finite.
inline void power_of_two_scales(const double* max_abs, double* factor, int S) {
  for (int s = 0; s < S; ++s) factor[s] = sim::power_of_two_scale(max_abs[s]);
}
}  // namespace cpu
NORMSIM_GPU_OP_T(sample_max_abs, (const R* d_a, std::size_t n, int S, double* d_out), (d_a, n, S, d_out));
NORMSIM_GPU_OP(power_of_two_scales, (const double* d_max_abs, double* d_factor, int S),
               (d_max_abs, d_factor, S));

// The Frobenius norms' operand scales in one launch (Tuning::fused_scales, gpu/tuning.hpp): max_ab[s] =
// max|a| and max_ab[S + s] = max|b| of sample s as sample_max_abs gives them (a's samples n entries apart,
// b's m), and factor[i] = power_of_two_scale(max_ab[i]) for i < 2S: the same values as those three calls.
namespace cpu {
template <class R>
void operand_scales(const R* a, std::size_t n, const R* b, std::size_t m, int S, double* max_ab,
                    double* factor) {
  sample_max_abs(a, n, S, max_ab);
  sample_max_abs(b, m, S, max_ab + S);
  power_of_two_scales(max_ab, factor, 2 * S);
}
}  // namespace cpu
NORMSIM_GPU_OP_T(operand_scales,
                 (const R* d_a, std::size_t n, const R* d_b, std::size_t m, int S, double* d_max_ab,
                  double* d_factor),
                 (d_a, n, d_b, m, S, d_max_ab, d_factor));

// out[s] = sum_i (a[s*n+i] - b[s*n+i])^2 in double (one block per sample): output_change's numerator.
namespace cpu {
template <class R>
void sample_distance_sq(const R* a, const R* b, std::size_t n, int S, double* out) {
  for (int s = 0; s < S; ++s) {
    double acc = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const double e = double(a[s * n + i]) - double(b[s * n + i]);
      acc += e * e;
    }
    out[s] = acc;
  }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(sample_distance_sq, (const R* d_a, const R* d_b, std::size_t n, int S, double* d_out),
                 (d_a, d_b, n, S, d_out));

// The parameter update (sim/update_step.hpp), n entries of weights w and their loss gradients g (any
// number of samples): w[i] -= sgd_step(g[i], lr), or adam_step(g[i], lr, eps) with adam.
namespace cpu {
template <class R>
void gradient_step(R* w, const R* g, std::size_t n, double lr, bool adam, double eps) {
  for (std::size_t i = 0; i < n; ++i) w[i] -= adam ? sim::adam_step(g[i], lr, eps) : sim::sgd_step(g[i], lr);
}
// The training loop's Adam (sim/training_optimizer.hpp; per entry sim/update_step.hpp), n entries of one
// parameter for any number of samples. adam_accumulate takes the gradient g of W_eff into m and v as the
// parameter's, g * mult (mult the parametrization's forward multiplier, folded into W_eff); adam_displace
// then moves D = W_s - W_0 by -adam_displacement(m, v) * mult, W_eff's share of the step.

template <class R>
void adam_accumulate(const R* g, R* m, R* v, std::size_t n, double mult, sim::AdamStep a) {
  const R factor = R(mult);
  for (std::size_t i = 0; i < n; ++i) sim::adam_moments(R(g[i] * factor), m[i], v[i], a);
}

template <class R>
void adam_displace(R* disp, const R* m, const R* v, std::size_t n, double mult, sim::AdamStep a) {
  const R factor = R(mult);
  for (std::size_t i = 0; i < n; ++i) disp[i] -= sim::adam_displacement(m[i], v[i], a) * factor;
}
// out[s] = sum_i |a[s*n+i] - b[s*n+i]| in double (b null: sum_i |a[s*n+i]|), one block per sample: the
// logits' mean |z| and mean |z_s - z_0| of the training loop.

template <class R>
void sample_abs_distance(const R* a, const R* b, std::size_t n, int S, double* out) {
  for (int s = 0; s < S; ++s) {
    double acc = 0;
    for (std::size_t i = 0; i < n; ++i)
      acc += std::abs(double(a[s * n + i]) - (b ? double(b[s * n + i]) : 0.0));
    out[s] = acc;
  }
}
}  // namespace cpu
NORMSIM_GPU_OP_T(gradient_step, (R * d_w, const R* d_g, std::size_t n, double lr, bool adam, double eps),
                 (d_w, d_g, n, lr, adam, eps));
NORMSIM_GPU_OP_T(adam_accumulate, (const R* d_g, R* d_m, R* d_v, std::size_t n, double mult, sim::AdamStep a),
                 (d_g, d_m, d_v, n, mult, a));
NORMSIM_GPU_OP_T(adam_displace,
                 (R * d_disp, const R* d_m, const R* d_v, std::size_t n, double mult, sim::AdamStep a),
                 (d_disp, d_m, d_v, n, mult, a));
NORMSIM_GPU_OP_T(sample_abs_distance, (const R* d_a, const R* d_b, std::size_t n, int S, double* d_out),
                 (d_a, d_b, n, S, d_out));

// update = "random": factor[s] = sim::random_update_scale(w_sq[s], g_sq[s], scale).
namespace cpu {
inline void random_update_scales(const double* w_sq, const double* g_sq, double scale, double* factor,
                                 int S) {
  for (int s = 0; s < S; ++s) factor[s] = sim::random_update_scale(w_sq[s], g_sq[s], scale);
}
}  // namespace cpu
NORMSIM_GPU_OP(random_update_scales,
               (const double* d_w_sq, const double* d_g_sq, double scale, double* d_factor, int S),
               (d_w_sq, d_g_sq, scale, d_factor, S));

// dst (S x B x A x n) = src (S x A x B x n) with the middle axes swapped: attention's heads split from the
// tokens (A = T, B = heads, n = d_head: S x T x d to S x heads x T x d_head) so one strided-batched GEMM
// covers every (sample, head), and merged back (A = heads, B = T).
namespace cpu {
template <class R>
void swap_middle_axes(const R* src, R* dst, int S, int A, int B, int n) {
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a)
      for (int b = 0; b < B; ++b)
        for (int j = 0; j < n; ++j)
          dst[((std::size_t(s) * B + b) * A + a) * n + j] = src[((std::size_t(s) * A + a) * B + b) * n + j];
}
}  // namespace cpu
NORMSIM_GPU_OP_T(swap_middle_axes, (const R* d_src, R* d_dst, int S, int A, int B, int n),
                 (d_src, d_dst, S, A, B, n));

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
