// The optimizer of the training loop (sim/cpu/train_loop.hpp, docs/design/parametrization.md 3.5), written
// once for every device (issue 31 item 1): SGD without momentum, or Adam with its m and v kept across steps
// (Kingma & Ba 2015, Algorithm 1). A pass draws W_0 from its Philox counters as every pass does and the
// optimizer moves it to W_s (apply), from what it keeps per parameter: for Adam the displacement
// D = W_s - W_0, for SGD (constant learning rate) the sum S of the gradients so far, W_s = W_0 - lr S,
// through the one update's own arithmetic, so that steps = 1 is the one update bit for bit. Either is what a
// relative update ||W_s - W_0|| / ||W_0|| reads.
//
// A parameter is whatever reports a gradient: the optimizer lists no matrices of its own, so the embedding
// and readout matrices (sim/edges.hpp) are trained as the sublayers' are, once their pass reports them. Its
// buffers are made at its first gradient and reused by every later step.
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
//
// A Device (sim/cpu/optimizer.hpp for the CPU, gpu/gpu_optimizer.hpp for CUDA) supplies a parameter's storage
// and the arithmetic on it, entry by entry as sim/update_step.hpp writes it:
//   State, Extent             a parameter's buffers (sgd: g and S; adam: D, m and v) and its size;
//   kName                     the optimizer's name in its errors;
//   Device(shape, args...)    the device's own arguments (threads, handles, samples) follow the shape;
//   open(state, adam, extent) the buffers of a parameter at its first gradient, D, m and v zeroed;
//   take(state, moments, mult, gradient...)
//                             a pass's gradient, in the device's own form of it (whole, or the factors of
//                             A^T B), into sgd's g (moments empty), or into Adam's m and v by adam_moments
//                             as the parameter's, mult times W_eff's;
//   sum(state)                S += g (S = g at the first step);
//   displace(state, a, mult)  D -= adam_displacement(m, v, a) mult;
//   subtract_sum(state, W, lr), add_displacement(state, W)
//                             W -= lr S, W += D.
// Where a gradient is formed is where the devices differ most (the CPU by blocks of rows taken in while in
// cache, CUDA as one batched GEMM), so take() receives it as the device's adapter has it.
#pragma once
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "sim/param_key.hpp"
#include "sim/stack.hpp"
#include "sim/stack_ops.hpp"
#include "sim/update_step.hpp"

namespace normsim::sim {

// The learning rate, epsilon and forward multiplier of one parameter (see above).
struct ParamRule {
  double lr = 0, eps = 0, mult = 1;
};
ParamRule param_rule(const StackShape& s, int k, WeightKind w, Part part);
ParamRule edge_param_rule(const StackShape& s, Edge e);  // the embedding's or the readout's

ParamRule param_rule(const StackShape& s, const ParamKey& key);

template <class Device>
class TrainingOptimizer {
 public:
  struct Param {
    ParamRule rule;
    typename Device::State state;
    bool recorded = false;  // this pass's gradient is in
    bool stepped = false;   // a step has moved it (before that, apply leaves W as drawn)
  };

  template <class... DeviceArgs>
  explicit TrainingOptimizer(const StackShape& shape, DeviceArgs&&... device_args)
      : shape_(shape), kind_(shape.cfg.update), device_(shape, std::forward<DeviceArgs>(device_args)...) {
    if (kind_ != vocab::Update::sgd && kind_ != vocab::Update::adam)
      throw std::logic_error(std::string(Device::kName) + ": update is neither sgd nor adam");
  }

  // A pass's gradient of parameter `key` (extent: its size), in the form the device takes (see above).
  // Ignored once sealed; throws std::logic_error on a second gradient in one pass.
  template <class... Gradient>
  void take(const ParamKey& key, const typename Device::Extent& extent, const Gradient&... gradient) {
    if (Param* p = recording(key, extent)) device_.take(p->state, moments(*p), p->rule.mult, gradient...);
  }
  // The loss's backward is done: later reverse passes (the Jacobian probes) record nothing.
  void seal() { sealed_ = true; }

  // W_0 -> W_s: W - lr mult^2 S (sgd), W + D (adam); W unchanged before the parameter's first step.
  template <class Weights>
  void apply(const ParamKey& key, Weights& W) const {
    const auto it = params_.find(key);
    if (it == params_.end() || !it->second.stepped) return;
    const Param& p = it->second;
    // W_eff = mult W moves by mult dW, and W's gradient is mult times W_eff's: lr mult^2 on W_eff's
    // gradients.
    if (adam())
      device_.add_displacement(p.state, W);
    else
      device_.subtract_sum(p.state, W, p.rule.lr * p.rule.mult * p.rule.mult);
  }

  // Step t + 1 from the gradients of this pass, then opens the next pass's recording. Throws
  // std::logic_error when a trained parameter reported no gradient.
  void step() {
    ++t_;
    for (auto& [key, p] : params_) {
      if (!p.recorded)
        throw std::logic_error(std::string(Device::kName) + ": no gradient of " + param_name(key) +
                               " in step " + std::to_string(t_));
      if (adam())
        device_.displace(p.state, bias_corrected(p.rule), p.rule.mult);
      else
        device_.sum(p.state);  // S += g, W_eff's gradient (the multiplier enters in apply)
      p.recorded = false;
      p.stepped = true;
    }
    sealed_ = false;
  }
  int steps_taken() const { return t_; }

 private:
  bool adam() const { return kind_ == vocab::Update::adam; }
  // The parameter that takes this pass's gradient, its buffers opened at the first; null once sealed.
  Param* recording(const ParamKey& key, const typename Device::Extent& extent) {
    if (sealed_) return nullptr;
    auto [it, fresh] = params_.try_emplace(key);
    Param& p = it->second;
    if (fresh) {
      p.rule = param_rule(shape_, key);
      device_.open(p.state, adam(), extent);
    }
    if (p.recorded)
      throw std::logic_error(std::string(Device::kName) + ": a second gradient of " + param_name(key) +
                             " in step " + std::to_string(t_ + 1));
    p.recorded = true;
    return &p;
  }
  // How a gradient enters Adam's m and v as it arrives (no bias correction: adam_moments ignores it); none
  // for sgd, which keeps the gradient until step().
  std::optional<AdamStep> moments(const Param& p) const {
    if (!adam()) return std::nullopt;
    const Config& c = shape_.cfg;
    return AdamStep{p.rule.lr, p.rule.eps, c.adam_beta1, c.adam_beta2, 1, 1};
  }
  // Adam's scalars at step t, with the bias corrections 1 - b^t.
  AdamStep bias_corrected(const ParamRule& r) const {
    const Config& c = shape_.cfg;
    return {r.lr,
            r.eps,
            c.adam_beta1,
            c.adam_beta2,
            1 - std::pow(c.adam_beta1, t_),
            1 - std::pow(c.adam_beta2, t_)};
  }

  const StackShape& shape_;
  vocab::Update kind_;
  Device device_;
  int t_ = 0;
  bool sealed_ = false;
  std::map<ParamKey, Param> params_;
};

}  // namespace normsim::sim
