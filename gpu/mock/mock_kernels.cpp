// The mock's kernel launchers: every launcher of gpu/kernels.hpp runs its CPU twin (gpu/cpu_twins.hpp)
// on the mock's device memory, which is host memory. What this build tests is therefore the backend's
// orchestration (tape, planner, recompute, batching, layouts); the kernels themselves are checked against
// the same twins on a real device by tests/gpu/test_gpu_kernels.cpp. Each call counts as one launch
// (gpu/mock/mock_device.hpp).
#include "gpu/cpu_twins.hpp"
#include "gpu/kernels.hpp"
#include "gpu/mock/mock_device.hpp"

namespace normsim::gpu {

template <class R>
void gaussian_fill(R* d_out, std::size_t n, int S, const std::uint32_t* d_samples, std::uint64_t seed,
                   std::uint32_t layer, sim::Stream stream, double scale) {
  mock::count_launch();
  cpu::gaussian_fill(d_out, n, S, d_samples, seed, layer, stream, scale);
}

void gaussian_fill_bf16(std::uint16_t* d_bits, std::size_t n, int S, const std::uint32_t* d_samples,
                        std::uint64_t seed, std::uint32_t layer, sim::Stream stream, double scale) {
  mock::count_launch();
  cpu::gaussian_fill_bf16(d_bits, n, S, d_samples, seed, layer, stream, scale);
}

template <class R>
void input_fill(R* d_out, int S, const std::uint32_t* d_samples, int T, int d, std::uint64_t seed,
                double input_std, double rho, std::uint32_t batch) {
  mock::count_launch();
  cpu::input_fill(d_out, S, d_samples, T, d, seed, input_std, rho, batch);
}

template <class R>
void token_onehot_fill(R* d_out, int S, const std::uint32_t* d_samples, int T, int vocab, std::uint64_t seed,
                       std::uint32_t batch) {
  mock::count_launch();
  cpu::token_onehot_fill(d_out, S, d_samples, T, vocab, seed, batch);
}

template <class R>
void loss_gradient(const R* d_y, R* d_dy, int S, const std::uint32_t* d_samples, int T, int d,
                   std::uint64_t seed, bool mse, std::uint32_t batch) {
  mock::count_launch();
  cpu::loss_gradient(d_y, d_dy, S, d_samples, T, d, seed, mse, batch);
}

template <class R>
void row_norm_forward(const R* d_x, R* d_y, double* d_rstd, int rows, int n, sim::NormKind kind, double gain,
                      double eps) {
  mock::count_launch();
  cpu::row_norm_forward(d_x, d_y, d_rstd, rows, n, kind, gain, eps);
}

template <class R>
void row_norm_backward(const R* d_y, const R* d_dy, R* d_dx, const double* d_rstd, int rows, int n,
                       sim::NormKind kind, double gain, bool accumulate) {
  mock::count_launch();
  cpu::row_norm_backward(d_y, d_dy, d_dx, d_rstd, rows, n, kind, gain, accumulate);
}

void round_to_bf16(const float* d_x, float* d_rounded, std::uint16_t* d_bits, std::size_t n) {
  mock::count_launch();
  cpu::round_to_bf16(d_x, d_rounded, d_bits, n);
}

template <class R>
void pointwise_norm_forward(const R* d_x, R* d_y, std::size_t n, sim::PointwiseNorm f) {
  mock::count_launch();
  cpu::pointwise_norm_forward(d_x, d_y, n, f);
}

template <class R>
void pointwise_norm_backward(const R* d_x, const R* d_dy, R* d_dx, std::size_t n, sim::PointwiseNorm f,
                             bool accumulate) {
  mock::count_launch();
  cpu::pointwise_norm_backward(d_x, d_dy, d_dx, n, f, accumulate);
}

template <class R>
void unit_norm_vectors(R* d_w, int S, int rows, int cols, const sim::UnitNorm& u) {
  mock::count_launch();
  cpu::unit_norm_vectors(d_w, S, rows, cols, u);
}

template <class R>
void attention_gate_forward(const R* d_o, const R* d_z, R* d_y, int rows, int d, int group) {
  mock::count_launch();
  cpu::attention_gate_forward(d_o, d_z, d_y, rows, d, group);
}

template <class R>
void attention_gate_backward(const R* d_o, const R* d_z, const R* d_dy, R* d_do, R* d_dz, int rows, int d,
                             int group) {
  mock::count_launch();
  cpu::attention_gate_backward(d_o, d_z, d_dy, d_do, d_dz, rows, d, group);
}

template <class R>
void activation_forward(const R* d_h, R* d_a, std::size_t n, sim::Activation act) {
  mock::count_launch();
  cpu::activation_forward(d_h, d_a, n, act);
}

template <class R>
void activation_backward(const R* d_h, const R* d_da, R* d_dh, std::size_t n, sim::Activation act) {
  mock::count_launch();
  cpu::activation_backward(d_h, d_da, d_dh, n, act);
}

template <class R>
void moe_gates(const R* d_z, R* d_g, int rows, int E, int k, bool renormalized) {
  mock::count_launch();
  cpu::moe_gates(d_z, d_g, rows, E, k, renormalized);
}

template <class R>
void moe_gates_backward(const R* d_z, const R* d_dg, R* d_dz, int rows, int E, int k, bool renormalized) {
  mock::count_launch();
  cpu::moe_gates_backward(d_z, d_dg, d_dz, rows, E, k, renormalized);
}

template <class R>
void moe_gate_rows(R* d_out, const R* d_g, const R* d_y, int rows, int n, int E, int e, bool accumulate) {
  mock::count_launch();
  cpu::moe_gate_rows(d_out, d_g, d_y, rows, n, E, e, accumulate);
}

template <class R>
void moe_gate_gradient(const R* d_dout, const R* d_y, R* d_dg, int rows, int n, int E, int e) {
  mock::count_launch();
  cpu::moe_gate_gradient(d_dout, d_y, d_dg, rows, n, E, e);
}

template <class R>
void swiglu_forward(const R* d_g, const R* d_h, R* d_a, std::size_t n) {
  mock::count_launch();
  cpu::swiglu_forward(d_g, d_h, d_a, n);
}

template <class R>
void swiglu_backward(const R* d_g, const R* d_h, const R* d_da, R* d_dg, R* d_dh, std::size_t n) {
  mock::count_launch();
  cpu::swiglu_backward(d_g, d_h, d_da, d_dg, d_dh, n);
}

template <class R>
void scaled_sum(R* d_out, const R* d_a, const double* d_s, const R* d_b, std::size_t n, int S,
                bool accumulate) {
  mock::count_launch();
  cpu::scaled_sum(d_out, d_a, d_s, d_b, n, S, accumulate);
}

template <class R>
void softmax_forward(R* d_scores, int rows, int T, bool causal) {
  mock::count_launch();
  cpu::softmax_forward(d_scores, rows, T, causal);
}

template <class R>
void softmax_backward(const R* d_p, R* d_dp, int rows, int T, double scale) {
  mock::count_launch();
  cpu::softmax_backward(d_p, d_dp, rows, T, scale);
}

template <class R>
void sample_dot(const R* d_a, const R* d_b, std::size_t n, int S, double* d_out) {
  mock::count_launch();
  cpu::sample_dot(d_a, d_b, n, S, d_out);
}

template <class R>
void sample_max_abs(const R* d_a, std::size_t n, int S, double* d_out) {
  mock::count_launch();
  cpu::sample_max_abs(d_a, n, S, d_out);
}

void power_of_two_scales(const double* d_max_abs, double* d_factor, int S) {
  mock::count_launch();
  cpu::power_of_two_scales(d_max_abs, d_factor, S);
}

template <class R>
void sample_distance_sq(const R* d_a, const R* d_b, std::size_t n, int S, double* d_out) {
  mock::count_launch();
  cpu::sample_distance_sq(d_a, d_b, n, S, d_out);
}

template <class R>
void gradient_step(R* d_w, const R* d_g, std::size_t n, double lr, bool adam, double eps) {
  mock::count_launch();
  cpu::gradient_step(d_w, d_g, n, lr, adam, eps);
}

template <class R>
void adam_accumulate(const R* d_g, R* d_m, R* d_v, std::size_t n, double mult, sim::AdamStep a) {
  mock::count_launch();
  cpu::adam_accumulate(d_g, d_m, d_v, n, mult, a);
}

template <class R>
void adam_displace(R* d_disp, const R* d_m, const R* d_v, std::size_t n, double mult, sim::AdamStep a) {
  mock::count_launch();
  cpu::adam_displace(d_disp, d_m, d_v, n, mult, a);
}

template <class R>
void sample_abs_distance(const R* d_a, const R* d_b, std::size_t n, int S, double* d_out) {
  mock::count_launch();
  cpu::sample_abs_distance(d_a, d_b, n, S, d_out);
}

void random_update_scales(const double* d_w_sq, const double* d_g_sq, double scale, double* d_factor, int S) {
  mock::count_launch();
  cpu::random_update_scales(d_w_sq, d_g_sq, scale, d_factor, S);
}

template <class R>
void swap_middle_axes(const R* d_src, R* d_dst, int S, int A, int B, int n) {
  mock::count_launch();
  cpu::swap_middle_axes(d_src, d_dst, S, A, B, n);
}

NORMSIM_KERNEL_INSTANTIATIONS(float)
NORMSIM_KERNEL_INSTANTIATIONS(double)

}  // namespace normsim::gpu
