#include "gpu/gpu_branches.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "gpu/blas.hpp"
#include "gpu/gpu_attention_device.hpp"
#include "gpu/gpu_mlp_device.hpp"
#include "gpu/gpu_moe.hpp"
#include "gpu/gpu_weights.hpp"
#include "gpu/memory_plan.hpp"
#include "gpu/ops.hpp"
#include "gpu/stat_ops.hpp"
#include "gpu/tuning.hpp"
#include "sim/init.hpp"
#include "sim/norm_site.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

namespace vocab = normsim::vocab;

// The MLP branch (sim/mlp_branch.hpp) run by the CUDA device, as a GpuBranch.
template <class R>
class GpuMlpBranch final : public GpuBranch<R> {
 public:
  GpuMlpBranch(const sim::StackShape& s, const sim::Placement& p, int k, const GpuContext<R>& ctx,
               std::uint32_t expert = 0)
      : device_(s, p, k, ctx, expert) {}

  DeviceBuffer<R> forward(const R* d_u) override {
    u_ = d_u;
    return mlp_.forward(device_, d_u);
  }
  DeviceBuffer<R> backward(const R* d_dout, double* d_gradw) override {
    return mlp_.backward(device_, u_, d_dout, d_gradw);
  }

 private:
  GpuMlpDevice<R> device_;
  sim::MlpBranch<GpuMlpDevice<R>> mlp_;
  const R* u_ = nullptr;  // the forward's input, valid until the backward (GpuBranch::forward)
};

// The decoder's encoder output of every sample (sim/encoder_output.hpp), S x T x d: sqrt(1 - rho) z per token
// plus sqrt(rho) c, c broadcast over the tokens by a product with a column of ones, then the norm per token.
template <class R>
DeviceBuffer<R> encoder_output(const sim::StackShape& s, const GpuContext<R>& ctx) {
  const int S = ctx.S, T = s.tokens, d = s.width;
  const double rho = s.cfg.encoder_cos;
  DeviceBuffer<R> e(std::size_t(S) * T * d), c(std::size_t(S) * d);
  gaussian_fill(e.get(), std::size_t(T) * d, S, ctx.d_samples, ctx.seed, 0, sim::Stream::encoder_tokens,
                std::sqrt(1.0 - rho));
  gaussian_fill(c.get(), std::size_t(d), S, ctx.d_samples, ctx.seed, 0, sim::Stream::encoder_common,
                std::sqrt(rho));
  const DeviceBuffer<R> ones = DeviceBuffer<R>::from_host(std::vector<R>(std::size_t(T), R(1)));
  gemm<R>(ctx.blas, false, false, T, d, 1, 1.0, ones.get(), 1, 0, c.get(), d, d, 1.0, e.get(), d,
          (long long)T * d, S);
  if (vocab::is_pointwise(s.norm)) {  // the encoder's final norm (sim/norm_site.hpp)
    const sim::NormAt at = sim::final_norm_at(s);
    pointwise_norm_forward(e.get(), e.get(), e.size(), {s.norm, s.cfg.norm_gain, at.alpha, at.shift});
    return e;
  }
  DeviceBuffer<double> rstd(std::size_t(S) * T);
  row_norm_forward(e.get(), e.get(), rstd.get(), S * T, d, s.norm, s.cfg.norm_gain, s.cfg.norm_eps);
  return e;
}

// The attention branch (sim/attention_branch.hpp) run by the CUDA device, as a GpuBranch.
template <class R>
class GpuAttentionBranch final : public GpuBranch<R> {
 public:
  GpuAttentionBranch(const sim::StackShape& s, const sim::Placement& p, int k, const GpuContext<R>& ctx,
                     bool qkv_norm)
      : a_(sim::attention_shape(s, k, qkv_norm)),
        device_(s, p, k, ctx, a_),
        attention_(a_, a_.cross ? encoder_output(s, ctx) : DeviceBuffer<R>()) {}

  DeviceBuffer<R> forward(const R* d_u) override {
    u_ = d_u;
    return attention_.forward(device_, d_u);
  }
  DeviceBuffer<R> backward(const R* d_dout, double* d_gradw) override {
    return attention_.backward(device_, u_, d_dout, d_gradw);
  }
  sim::ValueResidual<DeviceBuffer<R>>* value_residual() override { return attention_.value_residual(); }
  DeviceBuffer<R> values() const override { return device_.values(attention_.heads()); }

 private:
  sim::AttentionShape a_;
  GpuAttentionDevice<R> device_;
  sim::AttentionBranch<GpuAttentionDevice<R>> attention_;
  const R* u_ = nullptr;  // the forward's input, valid until the backward (GpuBranch::forward)
};

}  // namespace

namespace {

// x scaled per sample by `factor` (device, S doubles).
template <class R>
DeviceBuffer<R> scaled_copy(const R* d_x, std::size_t n, int S, const double* d_factor) {
  DeviceBuffer<R> y(n * S);
  scaled_sum(y.get(), d_x, d_factor, static_cast<const R*>(nullptr), n, S, false);
  return y;
}

// ||A^T B||_F^2 = <A A^T, B B^T>_F per sample into `sum`, the Grams formed in double from the operands
// scaled by `factor` (S for A, then S for B) and widened in one pass (scaled_widen: the bits of scaled_sum
// then widen). The CPU backend forms float32 Grams and, where their inner product cancels
// (sim::cancelled: less than 1 % of sum |Ga Gb| survives, as for W_K's gradient under collapsed tokens),
// A^T B in double; double Grams need no such fallback: their inner product is exact to double's rounding
// (~1e-16 of sum |Ga Gb| against float's ~1e-7) everywhere, and on the data-centre parts this backend
// targets a double GEMM of T x T x n runs at about float's non-tensor rate.
template <class R>
void gram_frobenius_sq(cublasHandle_t blas, const R* a, const R* b, const double* factor, int S, int T, int n,
                       int m, double* sum) {
  const auto scaled_in_double = [S, T](const R* x, const double* f, int k) {
    DeviceBuffer<double> w(std::size_t(S) * T * k);
    scaled_widen(x, f, std::size_t(T) * k, S, w.get());
    return w;
  };
  const DeviceBuffer<double> da = scaled_in_double(a, factor, n), db = scaled_in_double(b, factor + S, m);
  DeviceBuffer<double> ga(std::size_t(S) * T * T), gb(std::size_t(S) * T * T);
  gemm<double>(blas, false, true, T, T, n, 1.0, da.get(), n, (long long)T * n, da.get(), n, (long long)T * n,
               0.0, ga.get(), T, (long long)T * T, S);
  gemm<double>(blas, false, true, T, T, m, 1.0, db.get(), m, (long long)T * m, db.get(), m, (long long)T * m,
               0.0, gb.get(), T, (long long)T * T, S);
  sample_dot(ga.get(), gb.get(), std::size_t(T) * T, S, sum);
}

}  // namespace

// As sim::frobenius_of_AtB: the products run on A and B scaled per sample by powers of two (a float Gram of
// entries near 1e19 would overflow although the norm fits), the result is scaled back in double by
// frobenius_finish; a non-finite entry gives NaN, a zero operand 0. Nothing comes back to the host.
template <class R>
void batched_frobenius_of_AtB(cublasHandle_t blas, const R* d_a, const R* d_b, int S, int T, int n, int m,
                              double* d_out) {
  DeviceBuffer<double> d_stats(3 * std::size_t(S)), d_factor(2 * std::size_t(S));  // max|A|, max|B|, sum
  double* const max_a = d_stats.get();
  double* const max_b = max_a + S;
  double* const sum = max_b + S;
  if (tuning().fused_scales) {
    operand_scales(d_a, std::size_t(T) * n, d_b, std::size_t(T) * m, S, max_a, d_factor.get());
  } else {
    sample_max_abs(d_a, std::size_t(T) * n, S, max_a);
    sample_max_abs(d_b, std::size_t(T) * m, S, max_b);
    power_of_two_scales(max_a, d_factor.get(), 2 * S);
  }
  if (frobenius_by_gram(T, n, m)) {
    gram_frobenius_sq(blas, d_a, d_b, d_factor.get(), S, T, n, m, sum);
  } else {
    const DeviceBuffer<R> a = scaled_copy(d_a, std::size_t(T) * n, S, d_factor.get());
    const DeviceBuffer<R> b = scaled_copy(d_b, std::size_t(T) * m, S, d_factor.get() + S);
    DeviceBuffer<R> g(std::size_t(S) * n * m);
    gemm<R>(blas, true, false, n, m, T, 1.0, a.get(), n, (long long)T * n, b.get(), m, (long long)T * m, 0.0,
            g.get(), m, (long long)n * m, S);
    sample_dot(g.get(), g.get(), std::size_t(n) * m, S, sum);
  }
  frobenius_finish(max_a, max_b, sum, S, d_out);
}

template <class R>
std::unique_ptr<GpuBranch<R>> make_gpu_branch(const sim::StackShape& s, const sim::Placement& p, int k,
                                              const GpuContext<R>& ctx, bool qkv_norm) {
  if (s.branch(k) != sim::BranchKind::mlp)
    return std::make_unique<GpuAttentionBranch<R>>(s, p, k, ctx, qkv_norm);
  if (s.experts > 0) return make_gpu_moe<R>(s, p, k, ctx);
  return std::make_unique<GpuMlpBranch<R>>(s, p, k, ctx);
}

template <class R>
std::unique_ptr<GpuBranch<R>> make_gpu_mlp(const sim::StackShape& s, const sim::Placement& p, int k,
                                           const GpuContext<R>& ctx, std::uint32_t expert) {
  return std::make_unique<GpuMlpBranch<R>>(s, p, k, ctx, expert);
}

template std::unique_ptr<GpuBranch<float>> make_gpu_branch<float>(const sim::StackShape&,
                                                                  const sim::Placement&, int,
                                                                  const GpuContext<float>&, bool);
template std::unique_ptr<GpuBranch<double>> make_gpu_branch<double>(const sim::StackShape&,
                                                                    const sim::Placement&, int,
                                                                    const GpuContext<double>&, bool);
template std::unique_ptr<GpuBranch<float>> make_gpu_mlp<float>(const sim::StackShape&, const sim::Placement&,
                                                               int, const GpuContext<float>&, std::uint32_t);
template std::unique_ptr<GpuBranch<double>> make_gpu_mlp<double>(const sim::StackShape&,
                                                                 const sim::Placement&, int,
                                                                 const GpuContext<double>&, std::uint32_t);
template void batched_frobenius_of_AtB<float>(cublasHandle_t, const float*, const float*, int, int, int, int,
                                              double*);
template void batched_frobenius_of_AtB<double>(cublasHandle_t, const double*, const double*, int, int, int,
                                               int, double*);

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
