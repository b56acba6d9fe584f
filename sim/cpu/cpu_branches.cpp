#include "sim/cpu/cpu_branches.hpp"

#include <cmath>
#include <memory>
#include <tuple>
#include <utility>

#include "sim/cpu/cpu_attention_device.hpp"
#include "sim/cpu/cpu_mlp_device.hpp"
#include "sim/cpu/cpu_moe.hpp"
#include "sim/cpu/weight_source.hpp"
#include "sim/draws.hpp"
#include "sim/encoder_output.hpp"
#include "sim/init.hpp"
#include "sim/norm_site.hpp"

namespace normsim::sim {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The MLP branch (sim/mlp_branch.hpp) run by the CPU device, as a CpuBranch.
template <class R>
class CpuMlpBranch final : public CpuBranch<R> {
 public:
  CpuMlpBranch(const StackShape& s, const Placement& p, int k, SampleKey key, UpdateHooks<R> hooks,
               std::uint32_t expert = 0)
      : w_{s, p, k, key, hooks, expert} {}

  Mat<R> forward(const Mat<R>& u, CpuWorkspace<R>& ws) override {
    CpuMlpDevice<R> device(w_, ws);
    return mlp_.forward(device, u);
  }
  Mat<R> backward(const Mat<R>& u, const Mat<R>& dout, CpuWorkspace<R>& ws, WeightGradNorms& norms) override {
    norms.fill(kNaN);
    CpuMlpDevice<R> device(w_, ws);
    return mlp_.backward(device, u, dout, norms);
  }

 private:
  WeightSource<R> w_;
  MlpBranch<CpuMlpDevice<R>> mlp_;
};

// The decoder's encoder output E (T x d) of one sample (sim/encoder_output.hpp).
template <class R>
Mat<R> encoder_matrix(const StackShape& s, SampleKey key) {
  const int T = s.tokens, d = s.width;
  Mat<R> e(T, d), E(T, d);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < d; ++i) e(t, i) = R(encoder_entry(key.seed, key.sample, t, i, d, s.cfg.encoder_cos));
  if (vocab::is_pointwise(s.norm)) {  // the encoder's final norm (sim/norm_site.hpp)
    const NormAt at = final_norm_at(s);
    const PointwiseNorm f{s.norm, s.cfg.norm_gain, at.alpha, at.shift};
    return e.unaryExpr([&](R v) { return R(f(double(v))); });
  }
  for (int t = 0; t < T; ++t)
    row_norm_forward(s.norm, e.data() + std::size_t(t) * d, E.data() + std::size_t(t) * d, d, s.cfg.norm_gain,
                     s.cfg.norm_eps);
  return E;
}

// The attention branch (sim/attention_branch.hpp) run by the CPU device, as a CpuBranch.
template <class R>
class CpuAttentionBranch final : public CpuBranch<R> {
 public:
  CpuAttentionBranch(const StackShape& s, const Placement& p, int k, SampleKey key, bool qkv_norm,
                     UpdateHooks<R> hooks)
      : w_{s, p, k, key, hooks},
        a_(attention_shape(s, k, qkv_norm)),
        attention_(a_, a_.cross ? encoder_matrix<R>(s, key) : Mat<R>()) {}

  Mat<R> forward(const Mat<R>& u, CpuWorkspace<R>& ws) override {
    CpuAttentionDevice<R> device(w_, ws, a_);
    return attention_.forward(device, u);
  }
  Mat<R> backward(const Mat<R>& u, const Mat<R>& dout, CpuWorkspace<R>& ws, WeightGradNorms& norms) override {
    norms.fill(kNaN);
    CpuAttentionDevice<R> device(w_, ws, a_);
    return attention_.backward(device, u, dout, norms);
  }
  ValueResidual<Mat<R>>* value_residual() override { return attention_.value_residual(); }
  const Mat<R>& values() const override { return attention_.heads().v_read(a_.norms); }

 private:
  WeightSource<R> w_;
  AttentionShape a_;
  AttentionBranch<CpuAttentionDevice<R>> attention_;
};

}  // namespace

template <class R>
std::unique_ptr<CpuBranch<R>> make_cpu_branch(const StackShape& s, const Placement& p, int k, SampleKey key,
                                              bool qkv_norm, UpdateHooks<R> hooks) {
  if (s.branch(k) != BranchKind::mlp)
    return std::make_unique<CpuAttentionBranch<R>>(s, p, k, key, qkv_norm, hooks);
  if (s.experts > 0) return make_cpu_moe<R>(s, p, k, key);
  return std::make_unique<CpuMlpBranch<R>>(s, p, k, key, hooks);
}

template <class R>
std::unique_ptr<CpuBranch<R>> make_cpu_mlp(const StackShape& s, const Placement& p, int k, SampleKey key,
                                           std::uint32_t expert) {
  return std::make_unique<CpuMlpBranch<R>>(s, p, k, key, UpdateHooks<R>{}, expert);
}

template std::unique_ptr<CpuBranch<float>> make_cpu_branch<float>(const StackShape&, const Placement&, int,
                                                                  SampleKey, bool, UpdateHooks<float>);
template std::unique_ptr<CpuBranch<double>> make_cpu_branch<double>(const StackShape&, const Placement&, int,
                                                                    SampleKey, bool, UpdateHooks<double>);
template std::unique_ptr<CpuBranch<float>> make_cpu_mlp<float>(const StackShape&, const Placement&, int,
                                                               SampleKey, std::uint32_t);
template std::unique_ptr<CpuBranch<double>> make_cpu_mlp<double>(const StackShape&, const Placement&, int,
                                                                 SampleKey, std::uint32_t);

}  // namespace normsim::sim
