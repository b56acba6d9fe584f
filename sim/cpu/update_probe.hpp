// The coordinate-check sizes of each matrix's update at step s >= 1 of the training loop, measured on the CPU
// (sim/cpu/train_loop.hpp; issue 28 item 3; docs/metrics.md rows dwx_* and rel_dw_*; what it hands on:
// sim/update_sizes.hpp), with dW = W_s - W_0 of the stored W_eff (the parametrization's multiplier
// included, sim/training_optimizer.hpp):
//   rel_dw = ||dW||_F / ||W_0||_F              (Frobenius; NaN for a zero-init matrix)
//   dwx    = mean over t, j of |(x dW)[t, j]|   (x the matrix's input in step s's forward)
// dwx is mup's `l1` statistic (microsoft/mup@0518b39 mup/coord_check.py l.43-44: torch.abs(x).mean()) of the
// part of the matrix's output its update makes: the quantity Tensor Programs V's coordinate check asks to
// stay Theta(1) in width. A pass's weight source reports each matrix as the optimizer moves it (W_0 to W_s)
// and each product's input; the sizes are the last report's (a redraw in the backward reports the same W).
// Memory: a few matrices' worth (W_0 of the matrix being moved, dW until its product), reused from matrix
// to matrix.
#pragma once
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "sim/cpu_matrix.hpp"
#include "sim/stack.hpp"
#include "sim/stack_ops.hpp"
#include "sim/update_sizes.hpp"

namespace normsim::sim {

template <class R>
class UpdateProbe {
 public:
  // W_0 of the matrix the optimizer is about to move (the next stepped or stepped_edge).
  void before(const Mat<R>& W0);
  // Matrix w of sublayer k, or edge matrix e, moved by the optimizer from before()'s W_0 to Ws.
  void stepped(int k, WeightKind w, const Mat<R>& Ws);
  void stepped_edge(Edge e, const Mat<R>& Ws);
  // x, the input of matrix w of sublayer k (or of edge e) in this forward: x dW's mean |.|.
  void input(int k, WeightKind w, const Mat<R>& x);
  void edge_input(Edge e, const Mat<R>& x);
  UpdateSizes sizes(int depth) const;

 private:
  // dW is held from a matrix's step to its product's input only: once dwx is measured, a redraw in the
  // backward (the same W) measures rel_dw alone. Its buffer and W_0's come from spares of earlier
  // matrices, so that a pass allocates a few matrices, not one per matrix and step.
  struct Entry {
    Mat<R> dW;
    bool measured = false;  // dwx is this pass's
    double rel_dw = std::numeric_limits<double>::quiet_NaN(), dwx = std::numeric_limits<double>::quiet_NaN();
  };
  using Key = std::pair<int, int>;  // (sublayer, weight kind); an edge matrix e is (-1, e)
  std::map<Key, Entry> entries_;
  Mat<R> before_;
  std::vector<Mat<R>> spares_;
  Mat<R> spare(Eigen::Index rows, Eigen::Index cols);  // one of rows x cols entries if any is spare
  void step(const Key& key, const Mat<R>& Ws);
  void product(const Key& key, const Mat<R>& x);
};

}  // namespace normsim::sim
