// The CPU device of the stack's tape (sim/tape.hpp): one sample, each value a T x d Eigen matrix in host
// memory, branches from sim/cpu/cpu_branches.hpp on the sample's workspace. It also keeps the branch
// statistics of the pass: the raw branch output's mean square and the weight-gradient norms, per sublayer.
#pragma once
#include <array>
#include <memory>
#include <vector>

#include "sim/cpu/cpu_branches.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/placement.hpp"
#include "sim/tape.hpp"

namespace normsim::sim {

template <class R>
class CpuTapeDevice {
 public:
  using Buffer = Mat<R>;
  using Aux = std::vector<double>;  // a norm's row rstd; a scale's factor
  using Branch = CpuBranch<R>;

  // `ws` (kept by the caller, reused from sample to sample) holds the weight buffer and the threads that
  // work on this sample; without one the device keeps its own, one thread. hooks: the parameter update
  // this pass takes part in (sim/cpu/weight_update.hpp), if any.
  CpuTapeDevice(const StackShape& shape, const Placement& placement, SampleKey key,
                CpuWorkspace<R>* ws = nullptr, UpdateHooks<R> hooks = {});
  CpuTapeDevice(const CpuTapeDevice&) = delete;
  CpuTapeDevice& operator=(const CpuTapeDevice&) = delete;

  int batch() const { return 1; }
  const StackShape& shape() const { return shape_; }
  Mat<R> input(Mat<R> x) const { return x; }
  Mat<R> zeros() const { return Mat<R>::Zero(shape_.tokens, shape_.width); }
  Mat<R> copy(const Mat<R>& m) const { return m; }
  static bool empty(const Mat<R>& m) { return m.size() == 0; }
  static void free(Mat<R>& m) { m = Mat<R>(); }
  static void free(Aux& a) { a = Aux(); }

  Mat<R> norm(const Mat<R>& x, NormAt at, Aux& rstd) const;
  Mat<R> add(const Mat<R>& a, const Mat<R>& b) const { return a + b; }
  Mat<R> scale(const Mat<R>& a, const Scalars& s, Aux& factors) const;
  Scalars mean_sq(const Mat<R>& a) const;
  std::unique_ptr<CpuBranch<R>> make_branch(int k, bool qkv_norm) const;
  Mat<R> branch_forward(CpuBranch<R>& br, const Mat<R>& u, int k);
  Mat<R> project(const Mat<R>& a, Edge e) {
    const Mat<R>& W = edge_matrix(e);
    if (hooks_.probe) hooks_.probe->input(-1, int(e), a);
    return a * W;
  }

  // Backward: `into` (empty: not yet reached) += the gradient passed on.
  void add_to(Mat<R>& into, const Mat<R>& g) const;
  void add_to(Mat<R>& into, Mat<R>&& g) const;
  void add_scaled_to(Mat<R>& into, const Mat<R>& g, const Aux& factors) const;
  void norm_backward_to(Mat<R>& into, const Mat<R>& x, const Mat<R>& y, const Mat<R>& g, const Aux& rstd,
                        NormAt at) const;
  Mat<R> branch_backward(CpuBranch<R>& br, const Mat<R>& u, const Mat<R>& g, int k, bool gradw);
  // Of z = a W_e: into += g W_e^T (when a_grad), and the update records dW_e = a^T g.
  void project_backward_to(Mat<R>& into, const Mat<R>& a, const Mat<R>& g, Edge e, bool a_grad);

  // W_e of this pass (sim/edges.hpp): drawn at its first use, W + dW in an updated pass. A caller may change
  // it before the stack is built (tests/sim/test_edges.cpp's finite differences).
  Mat<R>& edge_matrix(Edge e);
  // The value residual (Fv, sim/value_residual.hpp): before forward, mix V_1 into br's values; after it, br's
  // V (V_1 when br is its source); before backward, dLoss/dV from later mixing; after it, dLoss/dV_1.
  void mix_values(CpuBranch<R>& br, const Mat<R>& first, double lam) const {
    mix_values_into(br, first, lam);
  }
  Mat<R> branch_values(const CpuBranch<R>& br) const { return br.values(); }
  void add_values_grad(CpuBranch<R>& br, Mat<R>&& g) const {
    add_to(value_residual_of(br).extra_grad, std::move(g));
  }
  Mat<R> branch_values_grad(CpuBranch<R>& br) const { return take_values_grad<CpuBranch<R>, Mat<R>>(br); }

  // Per sublayer k: mean of the raw branch output squared, and weight-gradient norms (after backward).
  std::vector<double> branch_sq;
  std::vector<WeightGradNorms> gradw;

 private:
  StackShape shape_;
  const Placement& placement_;
  SampleKey key_;
  CpuWorkspace<R> own_ws_;
  CpuWorkspace<R>& ws_;
  UpdateHooks<R> hooks_;
  std::array<Mat<R>, kEdges> edges_;
};

// One sample's tape on the CPU.
template <class R>
using CpuTape = Tape<CpuTapeDevice<R>>;

extern template class Tape<CpuTapeDevice<float>>;
extern template class Tape<CpuTapeDevice<double>>;

}  // namespace normsim::sim
