// The optimizer of the training loop (sim/train_loop.hpp, docs/design/parametrization.md 3.5): SGD without
// momentum, or Adam with its m and v kept across steps (Kingma & Ba 2015, Algorithm 1). A pass draws W_0 from
// its Philox counters as every pass does and the optimizer moves it to W_s (apply), from what it keeps per
// parameter: for Adam the displacement D = W_s - W_0, for SGD (constant learning rate) the sum S of the
// gradients so far, W_s = W_0 - lr S, through the one update's own subtract_sgd_step, so that steps = 1 is
// the one update bit for bit. Either is what a relative update ||W_s - W_0|| / ||W_0|| reads.
//
// A parameter is whatever reports a gradient (set_gradient): the optimizer lists no matrices of its own, so
// a matrix the stack gains (an embedding, a readout) is trained once its pass reports it.
//
// Per matrix, the parametrization's rules (sim/parametrization.hpp) give the learning rate (lr_sgd or
// lr_adam), Adam's epsilon and the forward multiplier `mult`, which normsim folds into the drawn matrix
// (W_eff = mult W). The optimizer steps the parameter W as its source trains it: W's gradient is mult times
// W_eff's, W moves by the rule, and W_eff by mult times that (exact for mult = 1). A bias takes its matrix's
// learning rate and epsilon, and no multiplier. Without a parametrization: update_lr and adam_eps.
#pragma once
#include <cstdint>
#include <map>
#include <tuple>

#include "sim/config.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/stack.hpp"
#include "sim/weight_update.hpp"

namespace normsim::sim {

// The learning rate, epsilon and forward multiplier of one parameter (see above).
struct ParamRule {
  double lr = 0, eps = 0, mult = 1;
};
ParamRule param_rule(const StackShape& s, int k, WeightKind w, Part part);

template <class R>
class Optimizer final : public ParameterUpdate<R> {
 public:
  explicit Optimizer(const StackShape& shape);
  bool needs_gradients() const override { return true; }
  void set_gradient(int k, WeightKind w, Mat<R> g, Part part = Part::weight) override;
  void seal() override { sealed_ = true; }
  // W_0 -> W_s: W - lr S (sgd), W + D (adam); W unchanged before the parameter's first step.
  void apply(int k, WeightKind w, Mat<R>& W, Part part = Part::weight) const override;
  // Step t + 1 from the gradients of this pass, then opens the next pass's recording. Throws
  // std::logic_error when a trained parameter reported no gradient.
  void step();
  int steps_taken() const { return t_; }
  // The copies of the stack's weights one sample's optimizer holds: S (sgd); D, m and v (adam).
  static int state_copies(vocab::Update u) { return u == vocab::Update::adam ? 3 : 1; }

 private:
  struct Param {
    ParamRule rule;
    Mat<R> grad, grad_sum, disp, m, v;  // grad_sum: sgd's S; disp, m, v: Adam's
  };
  using Key = std::tuple<int, int, int>;  // sublayer, weight kind, part
  const StackShape& shape_;
  vocab::Update kind_;
  int t_ = 0;
  bool sealed_ = false;
  std::map<Key, Param> params_;
  void step_param(Param& p) const;
};

}  // namespace normsim::sim
