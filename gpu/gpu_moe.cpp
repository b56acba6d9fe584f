#include "gpu/gpu_moe.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "gpu/blas.hpp"
#include "gpu/ops.hpp"
#include "sim/init.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

template <class R>
class GpuMoe final : public GpuBranch<R> {
 public:
  GpuMoe(const sim::StackShape& s, const sim::Placement& p, int k, const GpuContext<R>& ctx)
      : ctx_(ctx),
        E_(s.experts),
        top_k_(s.cfg.moe_top_k),
        renormalized_(s.cfg.moe_gate == vocab::MoeGate::renormalized),
        T_(s.tokens),
        d_(s.width),
        layer_(std::uint32_t(k)),
        router_std_(sim::weight_std(s, p, k, sim::WeightKind::wrouter)),
        router_unit_(sim::unit_norm(s, p, k, sim::WeightKind::wrouter)) {
    for (int e = 0; e < E_; ++e) experts_.push_back(make_gpu_mlp<R>(s, p, k, ctx, std::uint32_t(e)));
  }

  // z = u Wr (S x T x E), g = gates(z), out = sum_e g_e * MLP_e(u).
  DeviceBuffer<R> forward(const R* d_u) override {
    const int S = ctx_.S, rows = S * T_;
    u_ = d_u;
    wr_ = DeviceBuffer<R>(std::size_t(S) * d_ * E_);
    gaussian_fill(wr_.get(), std::size_t(d_) * E_, S, ctx_.d_samples, ctx_.seed, layer_,
                  sim::weight_stream(sim::WeightKind::wrouter), router_std_);
    if (router_unit_) unit_norm_vectors(wr_.get(), S, d_, E_, *router_unit_);
    z_ = DeviceBuffer<R>(std::size_t(rows) * E_);
    gemm<R>(ctx_.blas, false, false, T_, E_, d_, 1.0, d_u, d_, (long long)T_ * d_, wr_.get(), E_,
            (long long)d_ * E_, 0.0, z_.get(), E_, (long long)T_ * E_, S);
    g_ = DeviceBuffer<R>(std::size_t(rows) * E_);
    moe_gates(z_.get(), g_.get(), rows, E_, top_k_, renormalized_);
    DeviceBuffer<R> out(std::size_t(rows) * d_);
    outs_.clear();
    for (int e = 0; e < E_; ++e) {
      outs_.push_back(experts_[std::size_t(e)]->forward(d_u));
      moe_gate_rows(out.get(), g_.get(), outs_.back().get(), rows, d_, E_, e, e > 0);
    }
    return out;
  }

  // As sim/cpu/cpu_moe.cpp: experts (dout times the gate), gates (dg = <dout, MLP_e(u)> per token), router
  // (dz, then du += dz Wr^T). gradw of w1, w2, wgate: the norm over all experts together (their squares
  // summed on the host: S x 12 doubles per expert); wrouter's slot: ||u^T dz||_F.
  DeviceBuffer<R> backward(const R* d_dout, double* d_gradw) override {
    const int S = ctx_.S, rows = S * T_;
    DeviceBuffer<R> du(std::size_t(rows) * d_), de(std::size_t(rows) * d_), dg(std::size_t(rows) * E_);
    const std::size_t slots = std::size_t(sim::kWeightKinds) * S;
    std::vector<double> sq(slots, 0.0), norms;
    for (int e = 0; e < E_; ++e) {
      moe_gate_gradient(d_dout, outs_[std::size_t(e)].get(), dg.get(), rows, d_, E_, e);
      outs_[std::size_t(e)].reset();
      moe_gate_rows(de.get(), g_.get(), d_dout, rows, d_, E_, e, false);
      DeviceBuffer<double> gradw = DeviceBuffer<double>::from_host(
          std::vector<double>(slots, std::numeric_limits<double>::quiet_NaN()));
      DeviceBuffer<R> du_e = experts_[std::size_t(e)]->backward(de.get(), gradw.get());
      if (e == 0)
        copy_on_device(du.get(), du_e.get(), du.size() * sizeof(R));
      else
        scaled_sum<R>(du.get(), du_e.get(), nullptr, nullptr, du.size(), 1, true);
      norms = gradw.to_host();
      for (std::size_t i = 0; i < slots; ++i) sq[i] += norms[i] * norms[i];
    }
    if (E_ > 1)  // one expert: its norms as they are (E = 1 is the dense MLP)
      for (std::size_t i = 0; i < slots; ++i) norms[i] = std::sqrt(sq[i]);
    for (const sim::WeightKind w : {sim::WeightKind::w1, sim::WeightKind::w2, sim::WeightKind::wgate})
      if (!std::isnan(norms[std::size_t(w) * S]))
        copy_to_device(d_gradw + int(w) * S, norms.data() + std::size_t(w) * S,
                       std::size_t(S) * sizeof(double));
    DeviceBuffer<R> dz(std::size_t(rows) * E_);
    moe_gates_backward(z_.get(), dg.get(), dz.get(), rows, E_, top_k_, renormalized_);
    gemm<R>(ctx_.blas, false, true, T_, d_, E_, 1.0, dz.get(), E_, (long long)T_ * E_, wr_.get(), E_,
            (long long)d_ * E_, 1.0, du.get(), d_, (long long)T_ * d_, S);
    batched_frobenius_of_AtB<R>(ctx_.blas, u_, dz.get(), S, T_, d_, E_,
                                d_gradw + int(sim::WeightKind::wrouter) * S);
    wr_.reset();
    z_.reset();
    g_.reset();
    return du;
  }

 private:
  GpuContext<R> ctx_;
  int E_, top_k_;
  bool renormalized_;
  int T_, d_;
  std::uint32_t layer_;
  double router_std_;
  std::optional<sim::UnitNorm> router_unit_;  // init_wrouter = "unit:g" (nGPT's rule): its columns' length
  std::vector<std::unique_ptr<GpuBranch<R>>> experts_;
  const R* u_ = nullptr;
  DeviceBuffer<R> wr_, z_, g_;         // router (S x d x E), logits and gates (S x T x E)
  std::vector<DeviceBuffer<R>> outs_;  // MLP_e(u) of every expert (S x T x d), until the backward reads it
};

}  // namespace

template <class R>
std::unique_ptr<GpuBranch<R>> make_gpu_moe(const sim::StackShape& s, const sim::Placement& p, int k,
                                           const GpuContext<R>& ctx) {
  return std::make_unique<GpuMoe<R>>(s, p, k, ctx);
}

template std::unique_ptr<GpuBranch<float>> make_gpu_moe<float>(const sim::StackShape&, const sim::Placement&,
                                                               int, const GpuContext<float>&);
template std::unique_ptr<GpuBranch<double>> make_gpu_moe<double>(const sim::StackShape&,
                                                                 const sim::Placement&, int,
                                                                 const GpuContext<double>&);

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
