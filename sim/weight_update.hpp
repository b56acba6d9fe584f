// The parameter update W -> W + dW of the key `update`, one weight matrix at a time, for the metric
// output_change (a second forward pass with the updated weights; docs/metrics.md):
//   random: dW = update_scale ||W||_F / ||G||_F * G, G a standard Gaussian matrix drawn from its own Philox
//           stream (update_base + matrix) of (seed, sample, sublayer): reproducible and independent of W;
//           a bias b moves by update_scale ||b|| / ||G|| G likewise (stream bias_update_base + matrix), so a
//           zero bias stays zero;
//   sgd:    dW = -update_lr g, g = dLoss/dW of the first forward and backward pass;
//   adam:   Adam's first step with bias correction (Kingma & Ba 2015, Algorithm 1): m_1 = (1 - b1) g and
//           v_1 = (1 - b2) g^2 corrected to m = g, v = g^2, so dW = -update_lr g / (|g| + eps), eps =
//           adam_eps.
// Biases (bias = true) move by the same rule as their matrix. The edge matrices (sim/edges.hpp) move by
// sgd and adam, as every matrix the loss reaches; a random update perturbs the sublayers' matrices only (the
// perturbation whose output change the mean field predicts). The unperturbed W is redrawn from the weights'
// own counters in both passes, so dW is exactly the difference.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/config.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/stack.hpp"
#include "sim/stack_ops.hpp"
#include "sim/update_step.hpp"

namespace normsim::sim {

// Whether the update is a step on the loss (sgd, adam), which needs the first pass's weight gradients.
inline bool steps_on_loss(vocab::Update u) {
  return u == vocab::Update::sgd || u == vocab::Update::adam;
}

// What a pass of the CPU tape asks of a parameter update (sim/cpu_branches.hpp's UpdateHooks): the one
// update below, or the training loop's optimizer (sim/optimizer.hpp). A parameter is (sublayer k, matrix w,
// part); the update keeps whatever parameters report to it, so it lists none itself.
template <class R>
class ParameterUpdate {
 public:
  virtual ~ParameterUpdate() = default;
  // Whether the update needs the loss's weight gradients (set_gradient).
  virtual bool needs_gradients() const = 0;
  // Records g = dLoss/dW of matrix w of sublayer k, or of its bias, in a pass's backward.
  virtual void set_gradient(int k, WeightKind w, Mat<R> g, Part part = Part::weight) = 0;
  // The same for g = A^T B (A the matrix's input, B its output's gradient): an update may form g piece by
  // piece (the training loop's optimizer does, sim/optimizer.hpp) where this one forms it whole.
  virtual void set_product_gradient(int k, WeightKind w, const Mat<R>& A, const Mat<R>& B) {
    set_gradient(k, w, A.transpose() * B);
  }
  // The loss's backward is done: later reverse passes (the Jacobian probes) seed other vectors than
  // dLoss/dy, so what they would record is not the loss's gradient and is ignored.
  virtual void seal() = 0;
  // W += dW for matrix w of sublayer k, or its bias (1 x fan_out), W as drawn at init. Throws
  // std::logic_error when a needed gradient is missing.
  virtual void apply(int k, WeightKind w, Mat<R>& W, Part part = Part::weight) const = 0;
  // The same for the edge matrix W_e (sim/edges.hpp): g = dLoss/dW_e recorded in a backward, W_e += dW.
  virtual void set_edge_gradient(Edge e, Mat<R> g) = 0;
  virtual void apply_edge(Edge e, Mat<R>& W) const = 0;
};

// W -= lr g entry by entry (sgd_step): the one SGD update and the training loop's (sim/optimizer.hpp) call
// this one compiled body, so the two round alike (a compiler may fuse W - g lr into one rounding).
template <class R>
void subtract_sgd_step(Mat<R>& W, const Mat<R>& g, double lr);

template <class R>
class WeightUpdate final : public ParameterUpdate<R> {
 public:
  WeightUpdate(const Config& c, std::uint64_t seed, std::uint32_t sample);
  // sgd, adam: the first pass records the gradients; the second pass applies them.
  bool needs_gradients() const override;
  void set_gradient(int k, WeightKind w, Mat<R> g, Part part = Part::weight) override;
  void seal() override { sealed_ = true; }
  void apply(int k, WeightKind w, Mat<R>& W, Part part = Part::weight) const override;
  void set_edge_gradient(Edge e, Mat<R> g) override;
  const Mat<R>& edge_gradient(Edge e) const { return edge_grads_[std::size_t(e)]; }
  void apply_edge(Edge e, Mat<R>& W) const override;

 private:
  // W += dW = -(the sgd or adam step of g); throws std::logic_error naming `what` when g is missing.
  void step(const Mat<R>& g, Mat<R>& W, const std::string& what) const;
  vocab::Update kind_;
  double lr_, scale_, eps_;
  std::uint64_t seed_;
  std::uint32_t sample_;
  bool sealed_ = false;
  std::vector<std::array<Mat<R>, kParts * kWeightKinds>> grads_;  // per sublayer, by Part, then WeightKind
  std::array<Mat<R>, kEdges> edge_grads_;
};

}  // namespace normsim::sim
