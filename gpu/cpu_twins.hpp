// CPU twins of the kernels in gpu/kernels.hpp: same names and signatures, host pointers, plain loops over
// the shared per-element code in sim/ (the twin is the specification the kernel is tested on:
// docs/architecture.md §4).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

#include "sim/activations.hpp"
#include "sim/attention_gate.hpp"
#include "sim/bf16_bits.hpp"
#include "sim/gaussian.hpp"
#include "sim/inputs.hpp"
#include "sim/moe_gate.hpp"
#include "sim/pointwise_norm.hpp"
#include "sim/rownorm.hpp"
#include "sim/softmax.hpp"
#include "sim/unit_norm.hpp"
#include "sim/update_step.hpp"

namespace normsim::gpu::cpu {

template <class R>
void gaussian_fill(R* out, std::size_t n, int S, const std::uint32_t* samples, std::uint64_t seed,
                   std::uint32_t layer, sim::Stream stream, double scale) {
  for (int s = 0; s < S; ++s) {
    const sim::DrawKey key{seed, samples[s], layer, stream};
    for (std::size_t i = 0; i < n; ++i) out[s * n + i] = R(sim::gaussian_at(key, i) * float(scale));
  }
}

template <class R>
void input_fill(R* out, int S, const std::uint32_t* samples, int T, int d, std::uint64_t seed,
                double input_std, double rho, std::uint32_t batch = 0) {
  for (int s = 0; s < S; ++s)
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < d; ++i)
        out[(std::size_t(s) * T + t) * d + i] =
            R(sim::input_entry(seed, samples[s], t, i, d, input_std, rho, batch));
}

template <class R>
void token_onehot_fill(R* out, int S, const std::uint32_t* samples, int T, int vocab, std::uint64_t seed,
                       std::uint32_t batch = 0) {
  for (int s = 0; s < S; ++s)
    for (int t = 0; t < T; ++t)
      for (int v = 0; v < vocab; ++v)
        out[(std::size_t(s) * T + t) * vocab + v] =
            R(sim::token_id(seed, samples[s], t, vocab, batch) == v ? 1 : 0);
}

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

template <class R>
void row_norm_forward(const R* x, R* y, double* rstd, int rows, int n, sim::NormKind kind, double gain,
                      double eps) {
  for (int r = 0; r < rows; ++r)
    rstd[r] = sim::row_norm_forward(kind, x + std::size_t(r) * n, y + std::size_t(r) * n, n, gain, eps);
}

template <class R>
void row_norm_backward(const R* y, const R* dy, R* dx, const double* rstd, int rows, int n,
                       sim::NormKind kind, double gain, bool accumulate) {
  for (int r = 0; r < rows; ++r) {
    const std::size_t o = std::size_t(r) * n;
    sim::row_norm_backward(kind, y + o, dy + o, dx + o, n, gain, rstd[r], accumulate);
  }
}

inline void round_to_bf16(const float* x, float* rounded, std::uint16_t* bits, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t u;
    std::memcpy(&u, &x[i], 4);
    u = sim::bf16_rounded_bits(u);
    if (rounded) std::memcpy(&rounded[i], &u, 4);
    if (bits) bits[i] = std::uint16_t(u >> 16);
  }
}

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

template <class R>
void unit_norm_vectors(R* w, int S, int rows, int cols, const sim::UnitNorm& u) {
  for (int s = 0; s < S; ++s) sim::normalize_weight(w + std::size_t(s) * rows * cols, rows, cols, u);
}

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

template <class R>
void activation_forward(const R* h, R* a, std::size_t n, sim::Activation act) {
  for (std::size_t i = 0; i < n; ++i) a[i] = sim::activate(act, h[i]);
}

template <class R>
void activation_backward(const R* h, const R* da, R* dh, std::size_t n, sim::Activation act) {
  for (std::size_t i = 0; i < n; ++i) dh[i] = da[i] * sim::activate_derivative(act, h[i]);
}

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

template <class R>
void moe_gate_gradient(const R* dout, const R* y, R* dg, int rows, int n, int E, int e) {
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int i = 0; i < n; ++i)
      sum += double(dout[std::size_t(r) * n + i]) * double(y[std::size_t(r) * n + i]);
    dg[std::size_t(r) * E + e] = R(sum);
  }
}

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

template <class R>
void softmax_forward(R* sc, int rows, int T, bool causal) {
  for (int r = 0; r < rows; ++r) sim::softmax_row(sc + std::size_t(r) * T, T, causal ? r % T : T - 1);
}

template <class R>
void softmax_backward(const R* p, R* dp, int rows, int T, double scale) {
  for (int r = 0; r < rows; ++r)
    sim::softmax_backward_row(p + std::size_t(r) * T, dp + std::size_t(r) * T, T, scale);
}

template <class R>
void sample_dot(const R* a, const R* b, std::size_t n, int S, double* out) {
  for (int s = 0; s < S; ++s) {
    double acc = 0;
    for (std::size_t i = 0; i < n; ++i) acc += double(a[s * n + i]) * double(b[s * n + i]);
    out[s] = acc;
  }
}

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

template <class R>
void gradient_step(R* w, const R* g, std::size_t n, double lr, bool adam, double eps) {
  for (std::size_t i = 0; i < n; ++i) w[i] -= adam ? sim::adam_step(g[i], lr, eps) : sim::sgd_step(g[i], lr);
}

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

template <class R>
void sample_abs_distance(const R* a, const R* b, std::size_t n, int S, double* out) {
  for (int s = 0; s < S; ++s) {
    double acc = 0;
    for (std::size_t i = 0; i < n; ++i)
      acc += std::abs(double(a[s * n + i]) - (b ? double(b[s * n + i]) : 0.0));
    out[s] = acc;
  }
}

inline void random_update_scales(const double* w_sq, const double* g_sq, double scale, double* factor,
                                 int S) {
  for (int s = 0; s < S; ++s) factor[s] = sim::random_update_scale(w_sq[s], g_sq[s], scale);
}

inline void power_of_two_scales(const double* max_abs, double* factor, int S) {
  for (int s = 0; s < S; ++s) {
    int e = 0;
    const bool scale = std::isfinite(max_abs[s]) && max_abs[s] > 0;
    if (scale) std::frexp(max_abs[s], &e);
    factor[s] = scale ? std::ldexp(1.0, -e) : 1.0;
  }
}

template <class R>
void swap_middle_axes(const R* src, R* dst, int S, int A, int B, int n) {
  for (int s = 0; s < S; ++s)
    for (int a = 0; a < A; ++a)
      for (int b = 0; b < B; ++b)
        for (int j = 0; j < n; ++j)
          dst[((std::size_t(s) * B + b) * A + a) * n + j] = src[((std::size_t(s) * A + a) * B + b) * n + j];
}

}  // namespace normsim::gpu::cpu
