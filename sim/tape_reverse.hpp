// The tape's reverse pass (sim/tape.hpp): from the top op down, each op passes its gradient on to its
// inputs through the device's backward arithmetic. Included by sim/tape.hpp only.
#pragma once
#include <algorithm>
#include <utility>
#include <vector>

#include "sim/tape.hpp"

namespace normsim::sim {

template <class Dev>
void Tape<Dev>::differentiate(int i, ReverseMode mode) {
  const Op& op = ops_[i];
  const Buffer& g = grads_[i];
  switch (op.kind) {
    case Kind::input:
      break;
    case Kind::add:
      dev_.add_to(grads_[op.a], g);
      dev_.add_to(grads_[op.b], g);
      break;
    case Kind::scale:
      dev_.add_scaled_to(grads_[op.a], g, aux_[i]);
      break;
    case Kind::norm:
      dev_.norm_backward_to(grads_[op.a], values_[op.a], values_[i], g, aux_[i], op.at);
      break;
    case Kind::branch:
      if (!Dev::empty(values_grads_[i])) dev_.add_values_grad(*branches_[i], std::move(values_grads_[i]));
      dev_.add_to(grads_[op.a], dev_.branch_backward(*branches_[i], values_[op.a], g, op.k, mode.gradw));
      if (op.b >= 0) dev_.add_to(grads_[op.b], dev_.branch_values_grad(*branches_[i]));
      break;
    case Kind::values:  // to V_1's source branch, whose backward comes later in this pass
      dev_.add_to(values_grads_[op.a], g);
      break;
    case Kind::project:  // the loss's gradient of W_e, and of a's unless a is the embedding's data
      dev_.project_backward_to(grads_[op.a], values_[op.a], g, op.edge, !ops_[op.a].data);
      break;
  }
}

template <class Dev>
template <class OnGrad>
void Tape<Dev>::reverse(Value out, Buffer dout, const std::vector<Value>& watch, OnGrad&& on_grad,
                        ReverseMode mode) {
  grads_.clear();
  grads_.resize(values_.size());
  values_grads_.clear();
  values_grads_.resize(values_.size());
  grads_[out.id] = std::move(dout);
  std::vector<std::vector<int>> watchers(values_.size());
  for (std::size_t w = 0; w < watch.size(); ++w) watchers[watch[w].id].push_back(int(w));
  for (int i = int(values_.size()) - 1; i >= 0 && i >= mode.floor; --i) {
    if (i > mode.floor && !Dev::empty(grads_[i])) differentiate(i, mode);
    if (!watchers[i].empty()) {
      // A value the loss does not depend on has a zero gradient (ReZero at alpha = 0 reaches here).
      if (Dev::empty(grads_[i])) grads_[i] = dev_.zeros();
      for (const int w : watchers[i]) on_grad(w, grads_[i]);
    }
    if (!mode.consume) continue;
    Dev::free(grads_[i]);
    Dev::free(values_grads_[i]);
    Dev::free(values_[i]);
    Dev::free(aux_[i]);
    branches_[i].reset();
  }
}

template <class Dev>
void Tape<Dev>::backward(Value out, Buffer dout) {
  reverse(
      out, std::move(dout), {}, [](int, const Buffer&) {}, ReverseMode{});
  for (std::size_t i = 0; i < grads_.size(); ++i)
    if (Dev::empty(grads_[i]) && !ops_[i].data) grads_[i] = dev_.zeros();
}

template <class Dev>
template <class OnGrad>
void Tape<Dev>::vjp(Value out, Buffer u, const std::vector<Value>& watch, OnGrad&& on_grad, bool consume) {
  ReverseMode mode;
  mode.floor = out.id;
  for (const Value w : watch) mode.floor = std::min(mode.floor, w.id);
  mode.gradw = false;
  mode.consume = consume;
  reverse(out, std::move(u), watch, std::forward<OnGrad>(on_grad), mode);
}

template <class Dev>
std::vector<typename Dev::Buffer> Tape<Dev>::vjp(Value out, Buffer u, const std::vector<Value>& watch) {
  std::vector<Buffer> grads(watch.size());
  vjp(
      out, std::move(u), watch, [&](int w, const Buffer& g) { grads[w] = dev_.copy(g); }, false);
  return grads;
}

}  // namespace normsim::sim
