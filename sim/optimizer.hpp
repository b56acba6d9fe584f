// The optimizer of the training loop (sim/train_loop.hpp, docs/design/parametrization.md 3.5): SGD without
// momentum, or Adam with its m and v kept across steps (Kingma & Ba 2015, Algorithm 1). A pass draws W_0 from
// its Philox counters as every pass does and the optimizer moves it to W_s (apply), from what it keeps per
// parameter: for Adam the displacement D = W_s - W_0, for SGD (constant learning rate) the sum S of the
// gradients so far, W_s = W_0 - lr S, through the one update's own subtract_sgd_step, so that steps = 1 is
// the one update bit for bit. Either is what a relative update ||W_s - W_0|| / ||W_0|| reads.
//
// Memory: Adam holds D, m and v, three copies of the weights in the backend's precision, which is the floor
// of Adam on W (W, m, v; D stands in W's place and W_0 is redrawn). A weight's gradient is never stored:
// it is formed by blocks of rows (sim/gradient_blocks.hpp) and each block is taken into m and v at once;
// D moves in step(), as apply reads it until the pass ends. SGD holds S and the pass's gradients (apply
// reads S). The buffers are made at a parameter's first gradient and reused by every later step.
//
// A parameter is whatever reports a gradient (set_gradient, set_edge_gradient): the optimizer lists no
// matrices of its own, so the embedding and readout matrices (sim/edges.hpp) are trained as the sublayers'
// are, once their pass reports them.
//
// Per matrix, the parametrization's rules (sim/parametrization.hpp) give the learning rate (lr_sgd or
// lr_adam), Adam's epsilon and the forward multiplier `mult`, which normsim folds into the drawn matrix
// (W_eff = mult W). The optimizer steps the parameter W as its source trains it: W's gradient is mult times
// W_eff's, W moves by the rule, and W_eff by mult times that (exact for mult = 1). A bias takes its matrix's
// learning rate and epsilon, and no multiplier. Without a parametrization: update_lr and adam_eps.
// The edge matrices take their own rows (ResolvedRules::edge): muP's MuReadout multiplies its input by
// output_mult / width_mult (microsoft/mup@16ef490 mup/layer.py l.53-55), i.e. W_eff = W / m_N, and its W,
// like the embedding's, is "vector-like" (one infinite dimension): MuAdam leaves its learning rate alone
// (mup@0518b39 mup/optim.py l.59-64), MuSGD multiplies it by width_mult (l.102-103, 110-112). The preset
// `mup` writes those rules (docs/parametrizations.md); this class applies whatever rules it is given.
#pragma once
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "sim/config.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/stack.hpp"
#include "sim/state_arena.hpp"
#include "sim/weight_update.hpp"

namespace normsim::sim {

// The learning rate, epsilon and forward multiplier of one parameter (see above).
struct ParamRule {
  double lr = 0, eps = 0, mult = 1;
};
ParamRule param_rule(const StackShape& s, int k, WeightKind w, Part part);
ParamRule edge_param_rule(const StackShape& s, Edge e);  // the embedding's or the readout's

template <class R>
class Optimizer final : public ParameterUpdate<R> {
 public:
  // `threads`: the sample's threads, which split the weight gradients' products and the steps' entries (the
  // numbers do not depend on them). `state`: where Adam's D, m and v are kept (the workspace's, reused from
  // run to run), else the optimizer's own.
  explicit Optimizer(const StackShape& shape, int threads = 1, StateArena<R>* state = nullptr);
  bool needs_gradients() const override { return true; }
  void set_gradient(int k, WeightKind w, Mat<R> g, Part part = Part::weight) override;
  void set_product_gradient(int k, WeightKind w, const Mat<R>& A, const Mat<R>& B) override;
  void seal() override { sealed_ = true; }
  // W_0 -> W_s: W - lr S (sgd), W + D (adam); W unchanged before the parameter's first step.
  void apply(int k, WeightKind w, Mat<R>& W, Part part = Part::weight) const override;
  void set_edge_gradient(Edge e, Mat<R> g) override;
  void apply_edge(Edge e, Mat<R>& W) const override;
  // Step t + 1 from the gradients of this pass, then opens the next pass's recording. Throws
  // std::logic_error when a trained parameter reported no gradient.
  void step();
  int steps_taken() const { return t_; }

 private:
  // Adam takes a gradient into m and v as it arrives (adam_moments), which leaves D, all that apply reads,
  // as it was until step(); sgd keeps it (grad) until step() adds it to S, since apply reads S. Every
  // buffer is the parameter's own, made at its first gradient and reused by every step after.
  struct Param {
    ParamRule rule;
    Mat<R> grad, grad_sum;                          // sgd's g and S
    R *disp = nullptr, *m = nullptr, *v = nullptr;  // Adam's D, m and v, each `size` entries of the state
    Eigen::Index rows = 0, cols = 0;
    bool recorded = false;  // this pass's gradient is in
    bool stepped = false;   // a step has moved it (before that, apply leaves W as drawn)
  };
  // (sublayer, weight kind, part); an edge matrix e is (-1, e, weight), outside every sublayer.
  using Key = std::tuple<int, int, int>;
  static Key edge_key(Edge e) { return {-1, int(e), int(Part::weight)}; }
  const StackShape& shape_;
  vocab::Update kind_;
  int threads_;
  int t_ = 0;
  bool sealed_ = false;
  std::map<Key, Param> params_;
  std::vector<R> product_;  // set_product_gradient's g = A^T B, reused from matrix to matrix
  StateArena<R> own_state_;
  StateArena<R>& state_;
  // The parameter that takes this pass's gradient (rows x cols), or null once sealed. Throws
  // std::logic_error on a second gradient in one pass.
  Param* recording(const Key& key, Eigen::Index rows, Eigen::Index cols);
  // Entries [first, first + count) of a gradient g (g points at entry first): into m and v, or grad.
  void take(Param& p, const R* g, Eigen::Index first, Eigen::Index count) const;
  void record(const Key& key, const Mat<R>& g);
  void apply_param(const Key& key, Mat<R>& W) const;
  void step_param(Param& p) const;
};

}  // namespace normsim::sim
