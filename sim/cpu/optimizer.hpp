// The training loop's optimizer on the CPU backend (the rules: sim/training_optimizer.hpp): the CPU's
// storage of a parameter and its arithmetic, and the adapter that a pass's update hooks call
// (ParameterUpdate, sim/cpu/weight_update.hpp).
//
// Memory: Adam holds D, m and v, three copies of the weights in the backend's precision, which is the floor
// of Adam on W (W, m, v; D stands in W's place and W_0 is redrawn). A weight's gradient is never stored:
// it is formed by blocks of rows (sim/cpu/gradient_blocks.hpp) and each block is taken into m and v at once;
// D moves in step(), as apply reads it until the pass ends. SGD holds S and the pass's gradients (apply
// reads S). Entries are split across the sample's threads; the numbers do not depend on them.
#pragma once
#include <optional>
#include <vector>

#include "sim/config.hpp"
#include "sim/cpu/state_arena.hpp"
#include "sim/cpu/weight_update.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/stack.hpp"
#include "sim/training_optimizer.hpp"

namespace normsim::sim {

// The CPU's device of TrainingOptimizer (its contract: sim/training_optimizer.hpp).
template <class R>
class CpuOptimizerDevice {
 public:
  static constexpr const char* kName = "optimizer";
  struct Extent {
    Eigen::Index rows, cols;
  };
  // Adam takes a gradient into m and v as it arrives, which leaves D, all that apply reads, as it was until
  // step(); sgd keeps it (grad) until step() adds it to S, since apply reads S.
  struct State {
    Mat<R> grad, grad_sum;  // sgd's g and S
    R *disp = nullptr, *m = nullptr,
      *v = nullptr;  // Adam's D, m and v, each rows x cols entries of the arena
    Eigen::Index rows = 0, cols = 0;
  };
  // `threads`: the sample's. `state`: where Adam's D, m and v are kept (the workspace's, reused from run to
  // run), else the device's own.
  CpuOptimizerDevice(const StackShape& shape, int threads, StateArena<R>* state);
  void open(State& s, bool adam, Extent e);
  // A gradient whole, or as A^T B (A the matrix's input, B its output's gradient), formed by blocks of rows
  // each taken in while in cache.
  void take(State& s, const std::optional<AdamStep>& moments, double mult, const Mat<R>& g) const;
  void take(State& s, const std::optional<AdamStep>& moments, double mult, const Mat<R>& A, const Mat<R>& B);
  void sum(State& s) const;
  void displace(State& s, const AdamStep& a, double mult) const;
  void subtract_sum(const State& s, Mat<R>& W, double lr) const;
  void add_displacement(const State& s, Mat<R>& W) const;

 private:
  // Entries [first, first + count) of a gradient g (g points at entry first).
  void take_entries(State& s, const std::optional<AdamStep>& moments, R mult, const R* g, Eigen::Index first,
                    Eigen::Index count) const;
  int threads_;
  StateArena<R> own_state_;
  StateArena<R>& state_;
  std::vector<R> product_;  // g = A^T B, reused from matrix to matrix
};

template <class R>
class Optimizer final : public ParameterUpdate<R> {
 public:
  // `threads`, `state`: as CpuOptimizerDevice's.
  explicit Optimizer(const StackShape& shape, int threads = 1, StateArena<R>* state = nullptr)
      : steps_(shape, threads, state) {}
  bool needs_gradients() const override { return true; }
  void set_gradient(int k, WeightKind w, Mat<R> g, Part part = Part::weight) override {
    steps_.take(param_key(k, w, part), {g.rows(), g.cols()}, g);
  }
  void set_product_gradient(int k, WeightKind w, const Mat<R>& A, const Mat<R>& B) override {
    steps_.take(param_key(k, w, Part::weight), {A.cols(), B.cols()}, A, B);
  }
  void seal() override { steps_.seal(); }
  // W_0 -> W_s: W - lr S (sgd), W + D (adam); W unchanged before the parameter's first step.
  void apply(int k, WeightKind w, Mat<R>& W, Part part = Part::weight) const override {
    steps_.apply(param_key(k, w, part), W);
  }
  void set_edge_gradient(Edge e, Mat<R> g) override {
    steps_.take(edge_param_key(e), {g.rows(), g.cols()}, g);
  }
  void apply_edge(Edge e, Mat<R>& W) const override { steps_.apply(edge_param_key(e), W); }
  // Step t + 1 from the gradients of this pass (TrainingOptimizer::step).
  void step() { steps_.step(); }
  int steps_taken() const { return steps_.steps_taken(); }

 private:
  TrainingOptimizer<CpuOptimizerDevice<R>> steps_;
};

}  // namespace normsim::sim
