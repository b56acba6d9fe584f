#include "sim/cpu/cpu_moe.hpp"

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "sim/cpu/frobenius.hpp"
#include "sim/draws.hpp"
#include "sim/init.hpp"
#include "sim/moe_gate.hpp"

namespace normsim::sim {

namespace {

template <class R>
class CpuMoe final : public CpuBranch<R> {
 public:
  CpuMoe(const StackShape& s, const Placement& p, int k, SampleKey key)
      : E_(s.experts),
        top_k_(s.cfg.moe_top_k),
        renormalized_(s.cfg.moe_gate == vocab::MoeGate::renormalized),
        router_key_{key.seed, key.sample, std::uint32_t(k), weight_stream(WeightKind::wrouter)},
        router_std_(weight_std(s, p, k, WeightKind::wrouter)),
        router_unit_(unit_norm(s, p, k, WeightKind::wrouter)) {
    for (int e = 0; e < E_; ++e) experts_.push_back(make_cpu_mlp<R>(s, p, k, key, std::uint32_t(e)));
  }

  // z = u Wr, g = gates(z), out = sum_e diag(g_e) MLP_e(u) over the experts some token selects.
  Mat<R> forward(const Mat<R>& u, CpuWorkspace<R>& ws) override {
    const Eigen::Index T = u.rows();
    draw_matrix(wr_, u.cols(), E_, router_key_, router_std_, ws.threads);
    if (router_unit_) normalize_weight(wr_.data(), int(wr_.rows()), int(wr_.cols()), *router_unit_);
    z_.noalias() = u * wr_;
    g_.resize(T, E_);
    for (Eigen::Index t = 0; t < T; ++t) moe_gates(&z_(t, 0), E_, top_k_, renormalized_, &g_(t, 0));
    Mat<R> out = Mat<R>::Zero(T, u.cols());
    bool first = true;
    outs_.assign(std::size_t(E_), Mat<R>());
    for (int e = 0; e < E_; ++e) {
      if (!used(e)) continue;
      outs_[std::size_t(e)] = experts_[std::size_t(e)]->forward(u, ws);
      if (first)
        out.noalias() = g_.col(e).asDiagonal() * outs_[std::size_t(e)];  // no 0 + y: same bits as y
      else
        out.noalias() += g_.col(e).asDiagonal() * outs_[std::size_t(e)];
      first = false;
    }
    return out;
  }

  // Through the experts (dout scaled by each token's gate), the gates (dg_e[t] = <dout[t], MLP_e(u)[t]>) and
  // the router (dz by sim/moe_gate.hpp, then du += dz Wr^T). gradw of w1, w2, wgate: the Frobenius norm over
  // all experts' matrices together; wrouter's slot: ||u^T dz||_F (gradw_wrouter).
  Mat<R> backward(const Mat<R>& u, const Mat<R>& dout, CpuWorkspace<R>& ws, WeightGradNorms& norms) override {
    const Eigen::Index T = u.rows();
    norms.fill(std::numeric_limits<double>::quiet_NaN());
    WeightGradNorms sq{}, one{};
    int experts_run = 0;
    Mat<R> du = Mat<R>::Zero(T, u.cols()), dg = Mat<R>::Zero(T, E_);
    for (int e = 0; e < E_; ++e) {
      if (!used(e)) continue;
      const Mat<R>& y = outs_[std::size_t(e)];
      dg.col(e) = dout.cwiseProduct(y).rowwise().sum();
      const Mat<R> de = g_.col(e).asDiagonal() * dout;
      du += experts_[std::size_t(e)]->backward(u, de, ws, one);
      for (int w = 0; w < kWeightKinds; ++w) sq[std::size_t(w)] += one[std::size_t(w)] * one[std::size_t(w)];
      if (++experts_run == 1) norms = one;  // one expert run: its norms as they are (E = 1 is the dense MLP)
    }
    if (experts_run > 1)
      for (int w = 0; w < kWeightKinds; ++w) norms[std::size_t(w)] = std::sqrt(sq[std::size_t(w)]);
    Mat<R> dz(T, E_);
    for (Eigen::Index t = 0; t < T; ++t)
      moe_gates_backward(&z_(t, 0), E_, top_k_, renormalized_, &dg(t, 0), &dz(t, 0));
    du.noalias() += dz * wr_.transpose();
    norms[std::size_t(WeightKind::wrouter)] = frobenius_of_AtB<R>(u, dz);
    return du;
  }

 private:
  bool used(int e) const { return (g_.col(e).array() != R(0)).any(); }

  int E_, top_k_;
  bool renormalized_;
  DrawKey router_key_;
  double router_std_;
  std::optional<UnitNorm> router_unit_;  // init_wrouter = "unit:g" (nGPT's rule): its columns' length
  std::vector<std::unique_ptr<CpuBranch<R>>> experts_;
  Mat<R> wr_, z_, g_;         // the router (d x E), its logits and the gates (T x E)
  std::vector<Mat<R>> outs_;  // MLP_e(u) of every expert run (T x d), empty for the others
};

}  // namespace

template <class R>
std::unique_ptr<CpuBranch<R>> make_cpu_moe(const StackShape& s, const Placement& p, int k, SampleKey key) {
  return std::make_unique<CpuMoe<R>>(s, p, k, key);
}

template std::unique_ptr<CpuBranch<float>> make_cpu_moe<float>(const StackShape&, const Placement&, int,
                                                               SampleKey);
template std::unique_ptr<CpuBranch<double>> make_cpu_moe<double>(const StackShape&, const Placement&, int,
                                                                 SampleKey);

}  // namespace normsim::sim
