// The products every CPU branch device shares (sim/cpu/cpu_mlp_device.hpp, sim/cpu/cpu_attention_device.hpp):
// one sample, T x n Eigen matrices, weights from a WeightSource (sim/cpu/weight_source.hpp), the forward
// product with its bias and bf16 rounding, the backward's products with W^T, and the weight gradients, whose
// norms are taken together, concurrently, at each weight_gradients (the early ones with them).
#pragma once
#include <initializer_list>
#include <tuple>
#include <vector>

#include "sim/bf16.hpp"
#include "sim/cpu/cpu_branches.hpp"
#include "sim/cpu/cpu_parallel.hpp"
#include "sim/cpu/weight_source.hpp"
#include "sim/mlp_branch.hpp"

namespace normsim::sim {

template <class R>
class CpuProjections {
 public:
  using Buffer = Mat<R>;
  using In = const Mat<R>&;
  using NormsOut = WeightGradNorms&;

  CpuProjections(const WeightSource<R>& w, CpuWorkspace<R>& ws) : w_(w), ws_(ws) {}

  static const Mat<R>& view(const Mat<R>& b) { return b; }
  const Mat<R>& operand(const Mat<R>& x, Mat<R>& copy) const { return bf16_operand(w_.bf16(), x, copy); }

  void project(const Mat<R>& x, WeightKind w, Mat<R>& out) const { w_.multiply(out, x, w, ws_); }
  void back_project(const Mat<R>& dy, WeightKind w, Mat<R>& dx, bool accumulate) const;
  // Kept (its operands outlive the next weight_gradients) and taken with the next weight_gradients.
  void weight_gradient_early(const WeightGradient<In>& g, WeightGradNorms&) {
    early_.push_back({g.w, &g.a, &g.b});
  }
  void weight_gradients(std::initializer_list<WeightGradient<In>> grads, WeightGradNorms& norms);

 protected:
  const WeightSource<R>& w_;
  CpuWorkspace<R>& ws_;

 private:
  struct Kept {
    WeightKind w;
    const Mat<R>*a, *b;
  };
  std::vector<Kept> early_;
};

// In bf16 the second product is rounded on its own and added in float32; otherwise it accumulates inside
// the product.
template <class R>
void CpuProjections<R>::back_project(const Mat<R>& dy, WeightKind w, Mat<R>& dx, bool accumulate) const {
  const auto Wt = w_.draw(w, ws_).transpose();
  if (accumulate && !w_.bf16()) return product_by_columns(dx, dy, Wt, true, ws_.threads);
  Mat<R> p;
  Mat<R>& into = accumulate ? p : dx;
  product_by_columns(into, dy, Wt, false, ws_.threads);
  round_to_bf16_if<R>(w_.bf16(), into);
  if (accumulate) dx += p;
}

template <class R>
void CpuProjections<R>::weight_gradients(std::initializer_list<WeightGradient<In>> grads,
                                         WeightGradNorms& norms) {
  for (const WeightGradient<In>& g : grads) early_.push_back({g.w, &g.a, &g.b});
  std::vector<std::tuple<double*, const Mat<R>*, const Mat<R>*>> jobs;
  for (const Kept& g : early_) jobs.emplace_back(&norms[std::size_t(g.w)], g.a, g.b);
  gradient_norms<R>(jobs, ws_.threads);
  for (const Kept& g : early_) w_.record(g.w, *g.a, *g.b);
  early_.clear();
}

}  // namespace normsim::sim
