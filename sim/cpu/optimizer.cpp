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

namespace {

// D -= Adam's displacement x mult over one run of entries. The pointers are restrict and the step a copy:
// inlined into displace (one run, the usual case in a claim's samples), GCC left the loop scalar, a
// quarter of `normsim check`'s CPU time (perf, 2026-11-28); vectorised, the same IEEE divisions and square
// roots give the same bits.
template <class R>
void displace_run(R* __restrict d, const R* __restrict m, const R* __restrict v, Eigen::Index n,
                  const AdamStep a, const R mult) {
  for (Eigen::Index i = 0; i < n; ++i) d[i] -= adam_displacement(m[i], v[i], a) * mult;
}

}  // namespace

template <class R>
void CpuOptimizerDevice<R>::displace(State& s, const AdamStep& a, double mult) const {
  const Eigen::Index n = s.rows * s.cols;
  for_each_run(n, 8.0 * double(n), threads_, [&](Eigen::Index first, Eigen::Index last) {
    displace_run(s.disp + first, s.m + first, s.v + first, last - first, a, R(mult));
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
