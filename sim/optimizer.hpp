// The optimizer of the training loop (sim/train_loop.hpp, docs/design/parametrization.md 3.5): SGD without
// momentum, or Adam with its m and v kept across steps (Kingma & Ba 2015, Algorithm 1). It keeps, per
// parameter, the displacement D = W_s - W_0 from init, so a pass draws W_0 from its Philox counters as every
// pass does and adds D (apply): W_s is then exact to the draw, and D is what a relative update ||W_s -
// W_0|| / ||W_0|| reads. With steps = 1 and SGD, W_0 + D is today's one update W_0 - lr g bit for bit.
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
  // W += D, the parameter's displacement so far (none before its first step).
  void apply(int k, WeightKind w, Mat<R>& W, Part part = Part::weight) const override;
  // Step t + 1 from the gradients of this pass, then opens the next pass's recording. Throws
  // std::logic_error when a trained parameter reported no gradient.
  void step();
  int steps_taken() const { return t_; }
  // The bytes one sample's optimizer holds per weight entry: D, and Adam's m and v.
  static int state_copies(vocab::Update u) { return u == vocab::Update::adam ? 3 : 1; }

 private:
  struct Param {
    ParamRule rule;
    Mat<R> grad, disp, m, v;
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
