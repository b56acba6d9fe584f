#include "sim/cpu/optimizer.hpp"

#include <algorithm>

#include "sim/cpu/gradient_blocks.hpp"
#include "sim/unit_plan.hpp"
#include "sim/update_step.hpp"

namespace normsim::sim {

template <class R>
CpuOptimizerDevice<R>::CpuOptimizerDevice(const StackShape& shape, int threads, StateArena<R>* state)
    : threads_(threads), state_(state ? *state : own_state_) {
  const bool adam = shape.cfg.update == vocab::Update::adam;
  state_.reset(adam ? std::size_t(cpu_optimizer_bytes(shape.cfg) / sizeof(R)) : 0);
}

template <class R>
void CpuOptimizerDevice<R>::open(State& s, bool adam, Extent e) {
  s.rows = e.rows, s.cols = e.cols;
  if (!adam) {
    s.grad.resize(e.rows, e.cols);
    return;
  }
  const Eigen::Index n = e.rows * e.cols;
  s.disp = state_.take(std::size_t(n));
  s.m = state_.take(std::size_t(n));
  s.v = state_.take(std::size_t(n));
  for_each_run(n, 3.0 * double(n), threads_, [&](Eigen::Index first, Eigen::Index last) {
    for (R* x : {s.disp, s.m, s.v}) std::fill(x + first, x + last, R(0));
  });
}

template <class R>
void CpuOptimizerDevice<R>::take_entries(State& s, const std::optional<AdamStep>& moments, R mult, const R* g,
                                         Eigen::Index first, Eigen::Index count) const {
  if (!moments) {
    std::copy(g, g + count, s.grad.data() + first);
    return;
  }
  R* m = s.m + first;
  R* v = s.v + first;
  for (Eigen::Index i = 0; i < count; ++i) adam_moments(R(g[i] * mult), m[i], v[i], *moments);
}

template <class R>
void CpuOptimizerDevice<R>::take(State& s, const std::optional<AdamStep>& moments, double mult,
                                 const Mat<R>& g) const {
  for_each_run(g.size(), 4.0 * double(g.size()), threads_, [&](Eigen::Index first, Eigen::Index last) {
    take_entries(s, moments, R(mult), g.data() + first, first, last - first);
  });
}

template <class R>
void CpuOptimizerDevice<R>::take(State& s, const std::optional<AdamStep>& moments, double mult,
                                 const Mat<R>& A, const Mat<R>& B) {
  product_.resize(std::max(product_.size(), std::size_t(A.cols() * B.cols())));
  gradient_by_row_blocks<R>(product_.data(), A, B, threads_, [&](Eigen::Index row, Eigen::Index rows) {
    const Eigen::Index first = row * B.cols();
    take_entries(s, moments, R(mult), product_.data() + first, first, rows * B.cols());
  });
}

template <class R>
void CpuOptimizerDevice<R>::sum(State& s) const {
  if (s.grad_sum.size() == 0)
    s.grad_sum = s.grad;
  else
    s.grad_sum += s.grad;
}

template <class R>
void CpuOptimizerDevice<R>::displace(State& s, const AdamStep& a, double mult) const {
  const R mult_r = R(mult);
  const Eigen::Index n = s.rows * s.cols;
  for_each_run(n, 8.0 * double(n), threads_, [&](Eigen::Index first, Eigen::Index last) {
    R* d = s.disp;
    const R *m = s.m, *v = s.v;
    for (Eigen::Index i = first; i < last; ++i) d[i] -= adam_displacement(m[i], v[i], a) * mult_r;
  });
}

template <class R>
void CpuOptimizerDevice<R>::subtract_sum(const State& s, Mat<R>& W, double lr) const {
  subtract_sgd_step(W, s.grad_sum, lr);
}

template <class R>
void CpuOptimizerDevice<R>::add_displacement(const State& s, Mat<R>& W) const {
  W += Eigen::Map<const Mat<R>>(s.disp, s.rows, s.cols);
}

template class CpuOptimizerDevice<float>;
template class CpuOptimizerDevice<double>;
template class Optimizer<float>;
template class Optimizer<double>;

}  // namespace normsim::sim
