// The CPU backend's parameter updates: the interface a pass of the CPU tape calls (ParameterUpdate), and
// the one update of the key `update` (the rules: sim/single_update.hpp) on one sample's matrices.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>

#include "sim/config.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/single_update.hpp"
#include "sim/stack.hpp"
#include "sim/stack_ops.hpp"

namespace normsim::sim {

// What a pass of the CPU tape asks of a parameter update (sim/branch_hooks.hpp's UpdateHooks): the one
// update below, or the training loop's optimizer (sim/cpu/optimizer.hpp). A parameter is (sublayer k, matrix
// w, part); the update keeps whatever parameters report to it, so it lists none itself.
template <class R>
class ParameterUpdate {
 public:
  virtual ~ParameterUpdate() = default;
  // Whether the update needs the loss's weight gradients (set_gradient).
  virtual bool needs_gradients() const = 0;
  // Records g = dLoss/dW of matrix w of sublayer k, or of its bias, in a pass's backward.
  virtual void set_gradient(int k, WeightKind w, Mat<R> g, Part part = Part::weight) = 0;
  // The same for g = A^T B (A the matrix's input, B its output's gradient): an update may form g piece by
  // piece (the training loop's optimizer does, sim/cpu/optimizer.hpp) where this one forms it whole.
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

// W -= lr g entry by entry (sgd_step): the one SGD update and the training loop's (sim/cpu/optimizer.hpp)
// call this one compiled body, so the two round alike (a compiler may fuse W - g lr into one rounding).
template <class R>
void subtract_sgd_step(Mat<R>& W, const Mat<R>& g, double lr);

// The CPU's device of SingleUpdate (its contract: sim/single_update.hpp), on one sample.
template <class R>
class CpuUpdateDevice {
 public:
  static constexpr const char* kName = "weight update";
  using Gradient = Mat<R>;
  CpuUpdateDevice(std::uint64_t seed, std::uint32_t sample) : seed_(seed), sample_(sample) {}
  void keep(Mat<R>& kept, Mat<R> g) const { kept = std::move(g); }
  bool has(const Mat<R>& g, const Mat<R>& W) const { return g.rows() == W.rows() && g.cols() == W.cols(); }
  void descend(Mat<R>& W, const Mat<R>& g, double lr, std::optional<double> adam_eps) const;
  void add_random(Mat<R>& W, std::uint32_t k, Stream stream, double scale) const;

 private:
  std::uint64_t seed_;
  std::uint32_t sample_;
};

template <class R>
class WeightUpdate final : public ParameterUpdate<R> {
 public:
  WeightUpdate(const Config& c, std::uint64_t seed, std::uint32_t sample)
      : update_(c, c.update, seed, sample) {}
  bool needs_gradients() const override { return update_.needs_gradients(); }
  void set_gradient(int k, WeightKind w, Mat<R> g, Part part = Part::weight) override {
    update_.keep(k, w, part, std::move(g));
  }
  void seal() override { update_.seal(); }
  void apply(int k, WeightKind w, Mat<R>& W, Part part = Part::weight) const override {
    update_.apply(k, w, part, W);
  }
  void set_edge_gradient(Edge e, Mat<R> g) override { update_.keep_edge(e, std::move(g)); }
  const Mat<R>& edge_gradient(Edge e) const { return update_.edge_gradient(e); }
  void apply_edge(Edge e, Mat<R>& W) const override { update_.apply_edge(e, W); }

 private:
  SingleUpdate<CpuUpdateDevice<R>> update_;
};

}  // namespace normsim::sim
