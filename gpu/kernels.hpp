// Host launchers of every CUDA kernel of the backend (kernels.cu holds the kernels; this header is plain
// C++). Each launcher `foo` runs `foo_kernel` on the default stream and has a CPU twin `cpu::foo` with the
// same signature in gpu/cpu_twins.hpp; tests/gpu checks each pair. Pointers are device pointers.
// Layout: a batch of S samples, sample-major (S x T x d for activations, S x fan_in x fan_out for weights).
#pragma once
#include <cstddef>
#include <cstdint>

#include "sim/activations.hpp"
#include "sim/attention_gate.hpp"
#include "sim/philox.hpp"
#include "sim/pointwise_norm.hpp"
#include "sim/rownorm.hpp"
#include "sim/unit_norm.hpp"
#include "sim/update_step.hpp"

namespace normsim::gpu {

// out[s*n + i] = gaussian_at({seed, samples[s], layer, stream}, i) * float(scale). Not bit-identical to the
// CPU backend's weights (sim::fill_gaussian, vectorized Eigen log/sin/cos): they differ by up to a few float
// ulps (tests/gpu/test_draw_agreement.cpp measures it), plus the device's logf/sinf/cosf (<= 2 ulps).
template <class R>
void gaussian_fill(R* d_out, std::size_t n, int S, const std::uint32_t* d_samples, std::uint64_t seed,
                   std::uint32_t layer, sim::Stream stream, double scale);

// precision = "bf16": the same draw's bf16 bits (a CUDA_R_16BF operand), each rounded from the float32
// gaussian_fill<float> writes (sim/bf16_bits.hpp): bit for bit gaussian_fill<float> then round_to_bf16, in
// one pass that writes 2 bytes an entry instead of writing 4, reading them back and writing 2.
void gaussian_fill_bf16(std::uint16_t* d_bits, std::size_t n, int S, const std::uint32_t* d_samples,
                        std::uint64_t seed, std::uint32_t layer, sim::Stream stream, double scale);

// x_0 of every sample (sim/inputs.hpp's input_entry) on batch `batch` (the training loop's fresh batches;
// 0 = a run without steps), S x T x d.
template <class R>
void input_fill(R* d_out, int S, const std::uint32_t* d_samples, int T, int d, std::uint64_t seed,
                double input_std, double rho, std::uint32_t batch = 0);

// The embedding's input of token ids (sim/edges.hpp): S x T x vocab one-hot rows, row t's 1 at
// sim::token_id(seed, sample, t, vocab, batch).
template <class R>
void token_onehot_fill(R* d_out, int S, const std::uint32_t* d_samples, int T, int vocab, std::uint64_t seed,
                       std::uint32_t batch = 0);

// dLoss/dy on batch `batch`: readout (g) or mse (y - target), S x T x d.
template <class R>
void loss_gradient(const R* d_y, R* d_dy, int S, const std::uint32_t* d_samples, int T, int d,
                   std::uint64_t seed, bool mse, std::uint32_t batch = 0);

// Row norm of `rows` contiguous rows of length n (sim/rownorm.hpp); rstd[row] is kept for the backward.
template <class R>
void row_norm_forward(const R* d_x, R* d_y, double* d_rstd, int rows, int n, sim::NormKind kind, double gain,
                      double eps);
// dx (= or += when accumulate) from the forward output y and the incoming dy; dx may alias dy.
template <class R>
void row_norm_backward(const R* d_y, const R* d_dy, R* d_dx, const double* d_rstd, int rows, int n,
                       sim::NormKind kind, double gain, bool accumulate);

// DyT or Derf (sim/pointwise_norm.hpp) entry by entry: y = f(x); dx (= or += when accumulate) = dy f'(x).
template <class R>
void pointwise_norm_forward(const R* d_x, R* d_y, std::size_t n, sim::PointwiseNorm f);
template <class R>
void pointwise_norm_backward(const R* d_x, const R* d_dy, R* d_dx, std::size_t n, sim::PointwiseNorm f,
                             bool accumulate);

// a = act(h); dh = da * act'(h) (dh may alias da).
template <class R>
void activation_forward(const R* d_h, R* d_a, std::size_t n, sim::Activation act);
template <class R>
void activation_backward(const R* d_h, const R* d_da, R* d_dh, std::size_t n, sim::Activation act);
// SwiGLU: a = silu(g) * h; dg = da * h * silu'(g), dh = da * silu(g) (dg, dh may alias da, not each other).
template <class R>
void swiglu_forward(const R* d_g, const R* d_h, R* d_a, std::size_t n);
template <class R>
void swiglu_backward(const R* d_g, const R* d_h, const R* d_da, R* d_dg, R* d_dh, std::size_t n);

// precision = "bf16" (sim/bf16.hpp): each x[i] rounded to bf16 (sim/bf16_bits.hpp), as a float into
// d_rounded (which may alias d_x) and as its 16 bits into d_bits (a CUDA_R_16BF operand), each where not
// null.
void round_to_bf16(const float* d_x, float* d_rounded, std::uint16_t* d_bits, std::size_t n);

// The attention output gate (sim/attention_gate.hpp) over `rows` tokens of d coordinates, G = d / group gates
// each: y = o * sigmoid(z) (z rows x G); its backward d_o = dy * sigmoid(z) (d_o may alias dy) and
// dz = sigmoid'(z) * (the sum of dy * o over the gate's coordinates).
template <class R>
void attention_gate_forward(const R* d_o, const R* d_z, R* d_y, int rows, int d, int group);
template <class R>
void attention_gate_backward(const R* d_o, const R* d_z, const R* d_dy, R* d_do, R* d_dz, int rows, int d,
                             int group);

// nGPT's unit-norm weights (sim/unit_norm.hpp): every column (u.columns) or row of S matrices (rows x cols,
// row-major, one after the other) rescaled in place to length u.length.
template <class R>
void unit_norm_vectors(R* d_w, int S, int rows, int cols, const sim::UnitNorm& u);

// out = [out +] a * s[sample] [+ b] over S samples of n entries; s (S doubles) and b may be null.
template <class R>
void scaled_sum(R* d_out, const R* d_a, const double* d_s, const R* d_b, std::size_t n, int S,
                bool accumulate);

// In place, row by row: softmax of `rows` rows of length T (row r is query t = r % T; causal: s <= t
// kept, the rest 0). Sums in double, as the CPU branch.
template <class R>
void softmax_forward(R* d_scores, int rows, int T, bool causal);
// In place: dP := P * (dP - sum_s dP P) * scale (the softmax backward times 1/sqrt(d_head)).
template <class R>
void softmax_backward(const R* d_p, R* d_dp, int rows, int T, double scale);

// A routed MLP (sim/moe_gate.hpp, gpu/gpu_moe.cpp), rows = S x T tokens of E router logits each:
// g = the gates of z, row by row; dz = their backward from dg (the selection held fixed).
template <class R>
void moe_gates(const R* d_z, R* d_g, int rows, int E, int k, bool renormalized);
template <class R>
void moe_gates_backward(const R* d_z, const R* d_dg, R* d_dz, int rows, int E, int k, bool renormalized);
// out[r, :] = [out[r, :] +] g[r, e] y[r, :] over rows of n (g: rows x E): an expert's gated output, or the
// output gradient an expert receives.
template <class R>
void moe_gate_rows(R* d_out, const R* d_g, const R* d_y, int rows, int n, int E, int e, bool accumulate);
// dg[r, e] = sum_i dout[r, i] y[r, i] in double (dg: rows x E): dLoss / d gate of expert e.
template <class R>
void moe_gate_gradient(const R* d_dout, const R* d_y, R* d_dg, int rows, int n, int E, int e);

// out[s] = sum_i a[s*n+i] * b[s*n+i] in double (one block per sample: deterministic order).
template <class R>
void sample_dot(const R* d_a, const R* d_b, std::size_t n, int S, double* d_out);

// out[s] = max_i |a[s*n+i]| in double, NaN when any entry of the sample is NaN or infinite (exact: the same
// value whatever the launch's grid).
template <class R>
void sample_max_abs(const R* d_a, std::size_t n, int S, double* d_out);
// factor[s] = 2^-e with max_abs[s] = m 2^e, 0.5 <= m < 1 (std::frexp): scales sample s to max|x| in
// [0.5, 1) exactly; 1 where max_abs[s] is 0 or not finite.
void power_of_two_scales(const double* d_max_abs, double* d_factor, int S);

// out[s] = sum_i (a[s*n+i] - b[s*n+i])^2 in double (one block per sample): output_change's numerator.
template <class R>
void sample_distance_sq(const R* d_a, const R* d_b, std::size_t n, int S, double* d_out);

// The parameter update (sim/update_step.hpp), n entries of weights w and their loss gradients g (any
// number of samples): w[i] -= sgd_step(g[i], lr), or adam_step(g[i], lr, eps) with adam.
template <class R>
void gradient_step(R* d_w, const R* d_g, std::size_t n, double lr, bool adam, double eps);
// The training loop's Adam (sim/training_optimizer.hpp; per entry sim/update_step.hpp), n entries of one
// parameter for any number of samples. adam_accumulate takes the gradient g of W_eff into m and v as the
// parameter's, g * mult (mult the parametrization's forward multiplier, folded into W_eff); adam_displace
// then moves D = W_s - W_0 by -adam_displacement(m, v) * mult, W_eff's share of the step.
template <class R>
void adam_accumulate(const R* d_g, R* d_m, R* d_v, std::size_t n, double mult, sim::AdamStep a);
template <class R>
void adam_displace(R* d_disp, const R* d_m, const R* d_v, std::size_t n, double mult, sim::AdamStep a);
// out[s] = sum_i |a[s*n+i] - b[s*n+i]| in double (b null: sum_i |a[s*n+i]|), one block per sample: the
// logits' mean |z| and mean |z_s - z_0| of the training loop.
template <class R>
void sample_abs_distance(const R* d_a, const R* d_b, std::size_t n, int S, double* d_out);

// update = "random": factor[s] = sim::random_update_scale(w_sq[s], g_sq[s], scale).
void random_update_scales(const double* d_w_sq, const double* d_g_sq, double scale, double* d_factor, int S);

// dst (S x B x A x n) = src (S x A x B x n) with the middle axes swapped: attention's heads split from the
// tokens (A = T, B = heads, n = d_head: S x T x d to S x heads x T x d_head) so one strided-batched GEMM
// covers every (sample, head), and merged back (A = heads, B = T).
template <class R>
void swap_middle_axes(const R* d_src, R* d_dst, int S, int A, int B, int n);

// Explicit instantiations of every launcher for R, for the file that defines them (kernels.cu, or the
// mock build's gpu/mock/mock_kernels.cpp); used inside namespace normsim::gpu.
#define NORMSIM_KERNEL_INSTANTIATIONS(R)                                                                     \
  template void gaussian_fill<R>(R*, std::size_t, int, const std::uint32_t*, std::uint64_t, std::uint32_t,   \
                                 sim::Stream, double);                                                       \
  template void input_fill<R>(R*, int, const std::uint32_t*, int, int, std::uint64_t, double, double,        \
                              std::uint32_t);                                                                \
  template void token_onehot_fill<R>(R*, int, const std::uint32_t*, int, int, std::uint64_t, std::uint32_t); \
  template void loss_gradient<R>(const R*, R*, int, const std::uint32_t*, int, int, std::uint64_t, bool,     \
                                 std::uint32_t);                                                             \
  template void row_norm_forward<R>(const R*, R*, double*, int, int, sim::NormKind, double, double);         \
  template void row_norm_backward<R>(const R*, const R*, R*, const double*, int, int, sim::NormKind, double, \
                                     bool);                                                                  \
  template void pointwise_norm_forward<R>(const R*, R*, std::size_t, sim::PointwiseNorm);                    \
  template void pointwise_norm_backward<R>(const R*, const R*, R*, std::size_t, sim::PointwiseNorm, bool);   \
  template void activation_forward<R>(const R*, R*, std::size_t, sim::Activation);                           \
  template void activation_backward<R>(const R*, const R*, R*, std::size_t, sim::Activation);                \
  template void swiglu_forward<R>(const R*, const R*, R*, std::size_t);                                      \
  template void swiglu_backward<R>(const R*, const R*, const R*, R*, R*, std::size_t);                       \
  template void attention_gate_forward<R>(const R*, const R*, R*, int, int, int);                            \
  template void unit_norm_vectors<R>(R*, int, int, int, const sim::UnitNorm&);                               \
  template void attention_gate_backward<R>(const R*, const R*, const R*, R*, R*, int, int, int);             \
  template void scaled_sum<R>(R*, const R*, const double*, const R*, std::size_t, int, bool);                \
  template void softmax_forward<R>(R*, int, int, bool);                                                      \
  template void softmax_backward<R>(const R*, R*, int, int, double);                                         \
  template void sample_dot<R>(const R*, const R*, std::size_t, int, double*);                                \
  template void moe_gates<R>(const R*, R*, int, int, int, bool);                                             \
  template void moe_gates_backward<R>(const R*, const R*, R*, int, int, int, bool);                          \
  template void moe_gate_rows<R>(R*, const R*, const R*, int, int, int, int, bool);                          \
  template void moe_gate_gradient<R>(const R*, const R*, R*, int, int, int, int);                            \
  template void swap_middle_axes<R>(const R*, R*, int, int, int, int);                                       \
  template void sample_max_abs<R>(const R*, std::size_t, int, double*);                                      \
  template void sample_distance_sq<R>(const R*, const R*, std::size_t, int, double*);                        \
  template void gradient_step<R>(R*, const R*, std::size_t, double, bool, double);                           \
  template void adam_accumulate<R>(const R*, R*, R*, std::size_t, double, sim::AdamStep);                    \
  template void adam_displace<R>(R*, const R*, const R*, std::size_t, double, sim::AdamStep);                \
  template void sample_abs_distance<R>(const R*, const R*, std::size_t, int, double*);

}  // namespace normsim::gpu
