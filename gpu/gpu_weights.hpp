// The weights of one sublayer for a batch of S samples on the device (gpu/gpu_projections.hpp,
// gpu/gpu_mlp_device.hpp): drawn with gaussian_at and kept, or drawn again into the shared scratch when a
// product needs them (recompute); their forward and backward products through cuBLAS, bias and bf16
// rounding included, and their gradients' norms and records.
#pragma once
#include <cstdint>
#include <optional>
#include <type_traits>
#include <vector>

#include <cublas_v2.h>

#include "gpu/blas.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/gpu_branches.hpp"
#include "gpu/gpu_update_probe.hpp"
#include "gpu/ops.hpp"
#include "sim/init.hpp"
#include "sim/placement.hpp"
#include "sim/stack.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// out (S x T x n_out) = u (S x T x n_in) W (S x n_in x n_out) [+ out when accumulate]; or with trans_w,
// u W^T for W (S x n_out x n_in).
template <class R>
void times_weight(cublasHandle_t h, const R* d_u, const R* d_w, R* d_out, int S, int T, int n_in, int n_out,
                  bool trans_w, bool accumulate) {
  gemm<R>(h, false, trans_w, T, n_out, n_in, 1.0, d_u, n_in, (long long)T * n_in, d_w, trans_w ? n_in : n_out,
          (long long)n_in * n_out, accumulate ? 1.0 : 0.0, d_out, n_out, (long long)T * n_out, S);
}

// precision = "bf16" (sim/bf16.hpp), entries of d (a float buffer) rounded to bf16 in place where `on`.
template <class R>
void round_if_bf16(bool on, R* d, std::size_t n) {
  if constexpr (std::is_same_v<R, float>)
    if (on) round_to_bf16(d, d, nullptr, n);
}

// times_weight on bf16 operands (precision = "bf16", R float): u rounded to bf16 here, W given as its bf16
// bits (GpuWeights::bf16_bits), the products summed in float32, out left unrounded (its bias, if any, comes
// first).
inline void times_weight_bf16(cublasHandle_t h, const float* d_u, const std::uint16_t* d_w_bits, float* d_out,
                              int S, int T, int n_in, int n_out, bool trans_w) {
  const std::size_t nu = std::size_t(S) * T * n_in;
  DeviceBuffer<std::uint16_t> u_bits(nu);
  round_to_bf16(d_u, nullptr, u_bits.get(), nu);
  gemm_bf16(h, false, trans_w, T, n_out, n_in, 1.0, u_bits.get(), n_in, (long long)T * n_in, d_w_bits,
            trans_w ? n_in : n_out, (long long)n_in * n_out, 0.0, d_out, n_out, (long long)T * n_out, S);
}

// The weights of one sublayer for every sample of the batch: kept, or drawn on demand into the scratch.
template <class R>
class GpuWeights {
 public:
  GpuWeights(const sim::StackShape& s, const sim::Placement& p, int k, const GpuContext<R>& ctx,
             std::uint32_t index = 0)
      : s_(s), p_(p), k_(k), index_(index), bf16_(s.cfg.precision == vocab::Precision::bf16), ctx_(ctx) {
    if (ctx.recompute) return;
    for (sim::WeightKind w : s.weights(k)) {
      DeviceBuffer<R> b(std::size_t(ctx.S) * size(w));
      draw(w, b.get());
      kept_[int(w)] = std::move(b);
    }
  }
  // Valid until the next get() when recomputing.
  const R* get(sim::WeightKind w) {
    if (!ctx_.recompute) return kept_[int(w)].get();
    draw(w, ctx_.weight_scratch->get());
    return ctx_.weight_scratch->get();
  }
  long long size(sim::WeightKind w) const { return (long long)s_.fan_in(w) * s_.fan_out(w); }
  // The forward product of matrix w: out (S x T x fan_out) = u W, + 1 b^T where w has a bias b (the
  // broadcast over tokens a product with a column of ones, as encoder_output's). In bf16 u, W and b are read
  // rounded and out is rounded once, after the bias, as on the CPU (sim/cpu/weight_source.hpp's multiply).
  void forward(sim::WeightKind w, const R* d_u, R* d_out) {
    const int S = ctx_.S, T = s_.tokens, n = s_.fan_out(w);
    times(w, d_u, d_out, s_.fan_in(w), n, false);
    if (sim::has_bias(s_.cfg, w)) {
      const DeviceBuffer<R> b = bias(w);
      round_if_bf16(bf16_, b.get(), std::size_t(ctx_.S) * n);
      gemm<R>(ctx_.blas, false, false, T, n, 1, 1.0, ones().get(), 1, 0, b.get(), n, n, 1.0, d_out, n,
              (long long)T * n, S);
    }
    round_if_bf16(bf16_, d_out, std::size_t(S) * T * n);
    if (ctx_.probe) ctx_.probe->input(k_, int(w), d_u);  // after the product has drawn (and stepped) W
  }
  // The backward's product with matrix w: dx (S x T x fan_in) = dy W^T, in bf16 on rounded operands and
  // rounded.
  void backward(sim::WeightKind w, const R* d_dy, R* d_dx) {
    times(w, d_dy, d_dx, s_.fan_out(w), s_.fan_in(w), true);
    round_if_bf16(bf16_, d_dx, std::size_t(ctx_.S) * s_.tokens * s_.fan_in(w));
  }
  bool bf16() const { return bf16_; }
  // The loss's gradient of w is A^T B (A: S x T x fan_in, B: S x T x fan_out): its norm to d_gradw's block
  // of w, and the gradient itself to an update that records it, with its bias's 1^T B.
  void gradient(sim::WeightKind w, const R* d_a, const R* d_b, double* d_gradw) {
    const int n = s_.fan_in(w), m = s_.fan_out(w);
    batched_frobenius_of_AtB<R>(ctx_.blas, d_a, d_b, ctx_.S, s_.tokens, n, m, d_gradw + int(w) * ctx_.S);
    if (!ctx_.record) return;
    ctx_.record->record(k_, w, d_a, d_b, n, m);
    if (sim::has_bias(s_.cfg, w)) ctx_.record->record(k_, w, ones().get(), d_b, 1, m, sim::Part::bias);
  }
  void release() {
    for (auto& b : kept_) b.reset();
  }

 private:
  // out = u W, or u W^T with `trans` (u: S x T x n_in), on bf16 operands in bf16.
  void times(sim::WeightKind w, const R* d_u, R* d_out, int n_in, int n_out, bool trans) {
    if constexpr (std::is_same_v<R, float>) {
      if (bf16_)
        return times_weight_bf16(ctx_.blas, d_u, bf16_bits(w).get(), d_out, ctx_.S, s_.tokens, n_in, n_out,
                                 trans);
    }
    times_weight(ctx_.blas, d_u, get(w), d_out, ctx_.S, s_.tokens, n_in, n_out, trans, false);
  }
  // W's bf16 bits (R float). Recomputed weights drawn as a plain Gaussian (no unit norm, no update) are drawn
  // straight into bf16 (gaussian_fill_bf16: bit for bit draw() then round_to_bf16, one pass instead of a
  // float32 fill and a rounding pass over it); otherwise the float32 weight is rounded.
  DeviceBuffer<std::uint16_t> bf16_bits(sim::WeightKind w) {
    DeviceBuffer<std::uint16_t> bits(std::size_t(ctx_.S) * size(w));
    if (ctx_.recompute && !ctx_.apply && !sim::unit_norm(s_, p_, k_, w))
      gaussian_fill_bf16(bits.get(), std::size_t(size(w)), ctx_.S, ctx_.d_samples, ctx_.seed,
                         std::uint32_t(k_), sim::weight_stream(sim::WeightId{w, index_}),
                         sim::weight_std(s_, p_, k_, w));
    else
      round_to_bf16(get(w), nullptr, bits.get(), bits.size());
    return bits;
  }
  // Matrix w's bias for every sample (S x fan_out), + dB where the context applies an update.
  DeviceBuffer<R> bias(sim::WeightKind w) const {
    const int n = s_.fan_out(w);
    DeviceBuffer<R> b(std::size_t(ctx_.S) * n);
    gaussian_fill(b.get(), std::size_t(n), ctx_.S, ctx_.d_samples, ctx_.seed, std::uint32_t(k_),
                  sim::param_stream(sim::WeightId{w, index_}, sim::Part::bias), sim::bias_std(s_.cfg));
    if (ctx_.apply) ctx_.apply->apply(k_, w, b.get(), 1, n, sim::Part::bias);
    return b;
  }
  // S x T ones: the broadcast's column (the first T) and a bias's input as a matrix's (1^T B its gradient).
  const DeviceBuffer<R>& ones() {
    if (ones_.empty())
      ones_ = DeviceBuffer<R>::from_host(std::vector<R>(std::size_t(ctx_.S) * s_.tokens, R(1)));
    return ones_;
  }
  void draw(sim::WeightKind w, R* d_out) const {
    gaussian_fill(d_out, std::size_t(size(w)), ctx_.S, ctx_.d_samples, ctx_.seed, std::uint32_t(k_),
                  sim::weight_stream(sim::WeightId{w, index_}), sim::weight_std(s_, p_, k_, w));
    if (const std::optional<sim::UnitNorm> unit = sim::unit_norm(s_, p_, k_, w))
      unit_norm_vectors(d_out, ctx_.S, s_.fan_in(w), s_.fan_out(w), *unit);
    if (ctx_.apply) apply_update(w, d_out);
  }
  // W_0 -> W_s (or W + dW), reported to a training step's probe when there is one.
  void apply_update(sim::WeightKind w, R* d_w) const {
    const int n_in = s_.fan_in(w), n_out = s_.fan_out(w);
    if (!ctx_.probe) return ctx_.apply->apply(k_, w, d_w, n_in, n_out);
    DeviceBuffer<R> w0(std::size_t(ctx_.S) * size(w));
    copy_on_device(w0.get(), d_w, w0.size() * sizeof(R));
    ctx_.apply->apply(k_, w, d_w, n_in, n_out);
    ctx_.probe->stepped(k_, int(w), w0.get(), d_w, n_in, n_out);
  }
  const sim::StackShape& s_;
  const sim::Placement& p_;
  int k_;
  std::uint32_t index_;  // the expert of a routed MLP (sim::WeightId's index)
  bool bf16_;            // precision = "bf16": products on bf16 operands (MLP only: sim::bf16_refusal)
  GpuContext<R> ctx_;
  DeviceBuffer<R> kept_[sim::kWeightKinds];
  DeviceBuffer<R> ones_;
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
