// The CPU backend's record of one sample's forward pass (a tape) and its reverse pass. It implements
// StackOps, so placements build the stack through it; backward() walks the tape in reverse.
#pragma once
#include <memory>
#include <vector>

#include "sim/cpu_branches.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/placement.hpp"
#include "sim/stack_ops.hpp"

namespace normsim::sim {

template <class R>
class CpuGraph final : public StackOps {
 public:
  // `ws` (kept by the caller, reused from sample to sample) holds the weight buffer and the threads that
  // work on this sample; without one the graph keeps its own, one thread. hooks: the parameter update this
  // pass takes part in (sim/weight_update.hpp), if any.
  CpuGraph(const StackShape& shape, const Placement& placement, SampleKey key, CpuWorkspace<R>* ws = nullptr,
           UpdateHooks<R> hooks = {});

  int batch() const override { return 1; }
  Value norm(Value x, NormAt at) override;
  Value add(Value a, Value b) override;
  Value scale(Value a, const Scalars& s) override;
  using StackOps::scale;
  Value branch(int k, Value u, bool qkv_norm) override;
  Scalars mean_sq(Value a) override;

  Value input(Mat<R> x);
  const Mat<R>& value(Value v) const { return values_[v.id]; }
  // Reverse pass from dLoss/d(out); afterwards grad(v) is dLoss/dv for every value v.
  void backward(Value out, const Mat<R>& dout);
  const Mat<R>& grad(Value v) const { return grads_[v.id]; }
  // Vector-Jacobian products from u at `out`: returns u^T d(out)/d(w) for every w in `watch` (zeros where out
  // does not depend on w). Only the ops between the lowest watched value and `out` are walked; values below
  // it are held fixed (B2T's saved residual, Admin's omega). Leaves gradw alone; overwrites grad().
  std::vector<Mat<R>> vjp(Value out, const Mat<R>& u, const std::vector<Value>& watch);

  // Per sublayer k: mean of the raw branch output squared, and weight-gradient norms (after backward).
  std::vector<double> branch_sq;
  std::vector<WeightGradNorms> gradw;

 private:
  enum class Kind { input, norm, add, scale, branch };
  struct Op {
    Kind kind;
    int a = -1, b = -1;
    double s = 0;
    int k = -1;      // sublayer of a branch
    NormAt at = {};  // a dyt or derf norm's alpha and shift
  };
  Value push(Op op, Mat<R> v);
  void accumulate(int id, const Mat<R>& g);
  // The reverse pass over ops (floor, out]: weight-gradient norms go to norms_of(k).
  template <class NormsOf>
  void reverse(Value out, const Mat<R>& dout, int floor, NormsOf norms_of);

  StackShape shape_;
  const Placement& placement_;
  SampleKey key_;
  CpuWorkspace<R> own_ws_;
  CpuWorkspace<R>& ws_;
  UpdateHooks<R> hooks_;
  std::vector<Op> ops_;  // op i produced value i
  std::vector<Mat<R>> values_, grads_;
  std::vector<std::vector<double>> rstd_;                // per op: row rstd of a norm
  std::vector<std::unique_ptr<CpuBranch<R>>> branches_;  // per op
};

}  // namespace normsim::sim
