#include "sim/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/edges.hpp"
#include "sim/gradient_blocks.hpp"
#include "sim/parametrization.hpp"
#include "sim/unit_plan.hpp"
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
Optimizer<R>::Optimizer(const StackShape& shape, int threads, StateArena<R>* state)
    : shape_(shape), kind_(shape.cfg.update), threads_(threads), state_(state ? *state : own_state_) {
  if (kind_ != vocab::Update::sgd && kind_ != vocab::Update::adam)
    throw std::logic_error("optimizer: update is neither sgd nor adam");
  state_.reset(kind_ == vocab::Update::adam ? std::size_t(cpu_optimizer_bytes(shape.cfg) / sizeof(R)) : 0);
}

template <class R>
typename Optimizer<R>::Param* Optimizer<R>::recording(const Key& key, Eigen::Index rows, Eigen::Index cols) {
  if (sealed_) return nullptr;
  auto [it, fresh] = params_.try_emplace(key);
  Param& p = it->second;
  if (fresh) {
    p.rule = rule_of(shape_, key);
    p.rows = rows, p.cols = cols;
    if (kind_ == vocab::Update::sgd) {
      p.grad.resize(rows, cols);
    } else {
      const Eigen::Index n = rows * cols;
      p.disp = state_.take(std::size_t(n));
      p.m = state_.take(std::size_t(n));
      p.v = state_.take(std::size_t(n));
      for_each_run(n, 3.0 * double(n), threads_, [&](Eigen::Index first, Eigen::Index last) {
        for (R* x : {p.disp, p.m, p.v}) std::fill(x + first, x + last, R(0));
      });
    }
  }
  if (p.recorded)
    throw std::logic_error("optimizer: a second gradient of " + describe(key) + " in step " +
                           std::to_string(t_ + 1));
  p.recorded = true;
  return &p;
}

template <class R>
void Optimizer<R>::take(Param& p, const R* g, Eigen::Index first, Eigen::Index count) const {
  if (kind_ == vocab::Update::sgd) {
    std::copy(g, g + count, p.grad.data() + first);
    return;
  }
  // The parameter's gradient: mult times W_eff's (the multiplier is folded into the drawn W_eff).
  const R mult = R(p.rule.mult);
  const Config& c = shape_.cfg;
  const AdamStep a{p.rule.lr, p.rule.eps, c.adam_beta1, c.adam_beta2, 1, 1};
  R* m = p.m + first;
  R* v = p.v + first;
  for (Eigen::Index i = 0; i < count; ++i) adam_moments(R(g[i] * mult), m[i], v[i], a);
}

template <class R>
void Optimizer<R>::record(const Key& key, const Mat<R>& g) {
  Param* p = recording(key, g.rows(), g.cols());
  if (!p) return;
  for_each_run(g.size(), 4.0 * double(g.size()), threads_, [&](Eigen::Index first, Eigen::Index last) {
    take(*p, g.data() + first, first, last - first);
  });
}

template <class R>
void Optimizer<R>::set_gradient(int k, WeightKind w, Mat<R> g, Part part) {
  record(Key{k, int(w), int(part)}, g);
}

template <class R>
void Optimizer<R>::set_product_gradient(int k, WeightKind w, const Mat<R>& A, const Mat<R>& B) {
  Param* p = recording(Key{k, int(w), int(Part::weight)}, A.cols(), B.cols());
  if (!p) return;
  product_.resize(std::max(product_.size(), std::size_t(A.cols() * B.cols())));
  gradient_by_row_blocks<R>(product_.data(), A, B, threads_, [&](Eigen::Index row, Eigen::Index rows) {
    const Eigen::Index first = row * B.cols();
    take(*p, product_.data() + first, first, rows * B.cols());
  });
}

template <class R>
void Optimizer<R>::set_edge_gradient(Edge e, Mat<R> g) {
  record(edge_key(e), g);
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
  if (p.stepped && p.disp) W += Eigen::Map<const Mat<R>>(p.disp, p.rows, p.cols);
}

template <class R>
void Optimizer<R>::step_param(Param& p) const {
  if (kind_ == vocab::Update::sgd) {  // S += g, W_eff's gradient (the multiplier enters in apply)
    if (p.grad_sum.size() == 0)
      p.grad_sum = p.grad;
    else
      p.grad_sum += p.grad;
    return;
  }
  const R mult = R(p.rule.mult);
  const Config& c = shape_.cfg;
  const AdamStep a{p.rule.lr,
                   p.rule.eps,
                   c.adam_beta1,
                   c.adam_beta2,
                   1 - std::pow(c.adam_beta1, t_),
                   1 - std::pow(c.adam_beta2, t_)};
  const Eigen::Index n = p.rows * p.cols;
  for_each_run(n, 8.0 * double(n), threads_, [&](Eigen::Index first, Eigen::Index last) {
    R* d = p.disp;
    const R *m = p.m, *v = p.v;
    for (Eigen::Index i = first; i < last; ++i) d[i] -= adam_displacement(m[i], v[i], a) * mult;
  });
}

template <class R>
void Optimizer<R>::step() {
  ++t_;
  for (auto& [key, p] : params_) {
    if (!p.recorded)
      throw std::logic_error("optimizer: no gradient of " + describe(key) + " in step " + std::to_string(t_));
    step_param(p);
    p.recorded = false;
    p.stepped = true;
  }
  sealed_ = false;
}

template class Optimizer<float>;
template class Optimizer<double>;

}  // namespace normsim::sim
