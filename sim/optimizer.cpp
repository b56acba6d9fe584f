#include "sim/optimizer.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/edges.hpp"
#include "sim/parametrization.hpp"
#include "sim/update_step.hpp"

namespace normsim::sim {

ParamRule param_rule(const StackShape& s, int k, WeightKind w, Part part) {
  const Config& c = s.cfg;
  const bool adam = c.update == vocab::Update::adam;
  if (!s.rules) return {c.update_lr, c.adam_eps, 1.0};
  const MatrixRule& r = s.rules->at(k, w);
  return {adam ? r.lr_adam : r.lr_sgd, r.eps, part == Part::bias ? 1.0 : r.mult};
}

ParamRule edge_param_rule(const StackShape& s, Edge e) {
  const Config& c = s.cfg;
  if (!s.rules) return {c.update_lr, c.adam_eps, 1.0};
  const EdgeDims d = edge_dims(c, e);
  const MatrixRule r = s.rules->edge(s, edge_name(e), d.fan_in, d.cols);
  return {c.update == vocab::Update::adam ? r.lr_adam : r.lr_sgd, r.eps, r.mult};
}

namespace {
ParamRule rule_of(const StackShape& s, const std::tuple<int, int, int>& key) {
  const auto [k, w, part] = key;
  return k < 0 ? edge_param_rule(s, Edge(w)) : param_rule(s, k, WeightKind(w), Part(part));
}

// The parameter's name in an error message.
std::string describe(const std::tuple<int, int, int>& key) {
  const auto [k, w, part] = key;
  if (k < 0) return "the " + std::string(edge_name(Edge(w))) + " matrix";
  return std::string(weight_name(WeightKind(w))) + (Part(part) == Part::bias ? "'s bias" : "") +
         " at sublayer " + std::to_string(k);
}
}  // namespace

template <class R>
Optimizer<R>::Optimizer(const StackShape& shape) : shape_(shape), kind_(shape.cfg.update) {
  if (kind_ != vocab::Update::sgd && kind_ != vocab::Update::adam)
    throw std::logic_error("optimizer: update is neither sgd nor adam");
}

template <class R>
void Optimizer<R>::record(const Key& key, Mat<R> g) {
  if (sealed_) return;
  auto [it, fresh] = params_.try_emplace(key);
  if (fresh) it->second.rule = rule_of(shape_, key);
  it->second.grad = std::move(g);
}

template <class R>
void Optimizer<R>::set_gradient(int k, WeightKind w, Mat<R> g, Part part) {
  record(Key{k, int(w), int(part)}, std::move(g));
}

template <class R>
void Optimizer<R>::set_edge_gradient(Edge e, Mat<R> g) {
  record(edge_key(e), std::move(g));
}

template <class R>
void Optimizer<R>::apply(int k, WeightKind w, Mat<R>& W, Part part) const {
  apply_param(Key{k, int(w), int(part)}, W);
}

template <class R>
void Optimizer<R>::apply_edge(Edge e, Mat<R>& W) const {
  apply_param(edge_key(e), W);
}

template <class R>
void Optimizer<R>::apply_param(const Key& key, Mat<R>& W) const {
  const auto it = params_.find(key);
  if (it == params_.end()) return;
  const Param& p = it->second;
  // W_eff = mult W moves by mult dW, and W's gradient is mult times W_eff's: lr mult^2 on W_eff's gradients.
  if (p.grad_sum.size() > 0) subtract_sgd_step(W, p.grad_sum, p.rule.lr * p.rule.mult * p.rule.mult);
  if (p.disp.size() > 0) W += p.disp;
}

template <class R>
void Optimizer<R>::step_param(Param& p) const {
  if (kind_ == vocab::Update::sgd) {  // S += g, W_eff's gradient (the multiplier enters in apply)
    if (p.grad_sum.size() == 0)
      p.grad_sum = std::move(p.grad);
    else
      p.grad_sum += p.grad;
    return;
  }
  const R mult = R(p.rule.mult);
  // The parameter's gradient: mult times W_eff's (the multiplier is folded into the drawn W_eff).
  const Mat<R> g = p.grad * mult;
  if (p.disp.size() == 0) p.disp = p.m = p.v = Mat<R>::Zero(g.rows(), g.cols());
  const Config& c = shape_.cfg;
  const AdamStep a{p.rule.lr,
                   p.rule.eps,
                   c.adam_beta1,
                   c.adam_beta2,
                   1 - std::pow(c.adam_beta1, t_),
                   1 - std::pow(c.adam_beta2, t_)};
  for (Eigen::Index i = 0; i < g.size(); ++i)
    p.disp.data()[i] -= adam_moment_step(g.data()[i], p.m.data()[i], p.v.data()[i], a) * mult;
}

template <class R>
void Optimizer<R>::step() {
  ++t_;
  for (auto& [key, p] : params_) {
    if (p.grad.size() == 0)
      throw std::logic_error("optimizer: no gradient of " + describe(key) + " in step " + std::to_string(t_));
    step_param(p);
    p.grad = Mat<R>();
  }
  sealed_ = false;
}

template class Optimizer<float>;
template class Optimizer<double>;

}  // namespace normsim::sim
