// The parameter update W -> W + dW of the key `update`, one weight matrix at a time, for the metric
// output_change (a second forward pass with the updated weights; docs/metrics.md), written once for every
// device (issue 31 item 1):
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
//
// A Device (sim/cpu/weight_update.hpp for the CPU, gpu/gpu_weight_update.hpp for CUDA; one sample or a batch)
// supplies what is kept of a gradient and the arithmetic, entry by entry as sim/update_step.hpp writes it:
//   Gradient                       what a pass's gradient of one parameter is kept as;
//   kName                          the update's name in its errors;
//   keep(kept, gradient...)        the pass's gradient, in the device's own form of it (whole, or the
//                                  factors of A^T B);
//   has(kept, W)                   whether `kept` holds a gradient for W;
//   descend(W, kept, lr, adam_eps) W -= sgd_step(g, lr) (adam_eps empty) or adam_step(g, lr, eps), per entry;
//   add_random(W, k, stream, scale) W += random_update_scale(||W||^2, ||G||^2, scale) G per sample, G drawn
//                                  from Philox (seed, sample, sublayer k, stream).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "sim/config.hpp"
#include "sim/param_key.hpp"
#include "sim/stack.hpp"
#include "sim/stack_ops.hpp"

namespace normsim::sim {

// Whether the update is a step on the loss (sgd, adam), which needs the first pass's weight gradients.
inline bool steps_on_loss(vocab::Update u) {
  return u == vocab::Update::sgd || u == vocab::Update::adam;
}

template <class Device>
class SingleUpdate {
 public:
  // `kind`: the rule, c.update or none (where another update moves the weights).
  template <class... DeviceArgs>
  SingleUpdate(const Config& c, vocab::Update kind, DeviceArgs&&... device_args)
      : kind_(kind),
        lr_(c.update_lr),
        scale_(c.update_scale),
        eps_(c.adam_eps),
        device_(std::forward<DeviceArgs>(device_args)...) {
    if (needs_gradients()) grads_.resize(std::size_t(c.depth));
  }
  bool active() const { return kind_ != vocab::Update::none; }
  // sgd, adam: the first pass keeps the gradients; the second pass applies them.
  bool needs_gradients() const { return steps_on_loss(kind_); }
  // The loss's gradient of matrix w of sublayer k, or of its bias; ignored when not needed or once sealed.
  template <class... Gradient>
  void keep(int k, WeightKind w, Part part, Gradient&&... gradient) {
    if (needs_gradients() && !sealed_)
      device_.keep(grads_.at(std::size_t(k))[param_slot(w, part)], std::forward<Gradient>(gradient)...);
  }
  template <class... Gradient>
  void keep_edge(Edge e, Gradient&&... gradient) {
    if (needs_gradients() && !sealed_)
      device_.keep(edge_grads_[std::size_t(e)], std::forward<Gradient>(gradient)...);
  }
  // The loss's backward is done: later reverse passes (the Jacobian probes) seed other vectors than
  // dLoss/dy, so what they would record is not the loss's gradient and is ignored.
  void seal() { sealed_ = true; }
  const typename Device::Gradient& edge_gradient(Edge e) const { return edge_grads_[std::size_t(e)]; }

  // W += dW for matrix w of sublayer k, or its bias, W as drawn at init. Throws std::logic_error when a
  // needed gradient is missing.
  template <class Weights>
  void apply(int k, WeightKind w, Part part, Weights&& W) const {
    switch (kind_) {
      case vocab::Update::none:
        return;
      case vocab::Update::random:
        device_.add_random(W, std::uint32_t(k), update_stream(w, part), scale_);
        return;
      case vocab::Update::sgd:
      case vocab::Update::adam:
        break;
    }
    descend(param_key(k, w, part), grads_.at(std::size_t(k))[param_slot(w, part)], W);
  }
  // The same for the edge matrix W_e: moved by sgd and adam only.
  template <class Weights>
  void apply_edge(Edge e, Weights&& W) const {
    if (needs_gradients()) descend(edge_param_key(e), edge_grads_[std::size_t(e)], W);
  }

 private:
  template <class Weights>
  void descend(const ParamKey& key, const typename Device::Gradient& g, Weights& W) const {
    if (!device_.has(g, W))
      throw std::logic_error(std::string(Device::kName) + ": no gradient of " + param_name(key));
    device_.descend(W, g, lr_, kind_ == vocab::Update::adam ? std::optional<double>(eps_) : std::nullopt);
  }

  vocab::Update kind_;
  double lr_, scale_, eps_;
  Device device_;
  bool sealed_ = false;
  // per sublayer, by Part, then WeightKind
  std::vector<std::array<typename Device::Gradient, kParts * kWeightKinds>> grads_;
  std::array<typename Device::Gradient, kEdges> edge_grads_;
};

}  // namespace normsim::sim
