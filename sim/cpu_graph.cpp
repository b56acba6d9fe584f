#include "sim/cpu_graph.hpp"

#include <algorithm>
#include <limits>

#include "sim/rownorm.hpp"

namespace normsim::sim {

template <class R>
CpuGraph<R>::CpuGraph(const StackShape& shape, const Placement& placement, SampleKey key, CpuWorkspace<R>* ws,
                      UpdateHooks<R> hooks)
    : shape_(shape), placement_(placement), key_(key), ws_(ws ? *ws : own_ws_), hooks_(hooks) {
  ++ws_.pass;  // weights kept by an earlier pass are not this pass's
  const double nan = std::numeric_limits<double>::quiet_NaN();
  branch_sq.assign(shape.depth, nan);
  WeightGradNorms none;
  none.fill(nan);
  gradw.assign(shape.depth, none);
}

template <class R>
Value CpuGraph<R>::push(Op op, Mat<R> v) {
  ops_.push_back(op);
  values_.push_back(std::move(v));
  rstd_.emplace_back();
  branches_.emplace_back();
  return Value{int(ops_.size()) - 1};
}

template <class R>
Value CpuGraph<R>::input(Mat<R> x) {
  return push(Op{Kind::input}, std::move(x));
}

template <class R>
Value CpuGraph<R>::norm(Value x, NormAt at) {
  const Mat<R>& in = values_[x.id];
  Mat<R> y(in.rows(), in.cols());
  if (vocab::is_pointwise(shape_.norm)) {
    const PointwiseNorm f{shape_.norm, shape_.cfg.norm_gain, at.alpha, at.shift};
    y = in.unaryExpr([&](R v) { return R(f(double(v))); });
    Op op{Kind::norm, x.id};
    op.at = at;
    return push(op, std::move(y));
  }
  std::vector<double> rstd(in.rows());
  for (Eigen::Index t = 0; t < in.rows(); ++t)
    rstd[t] = row_norm_forward(shape_.norm, in.row(t).data(), y.row(t).data(), int(in.cols()),
                               shape_.cfg.norm_gain, shape_.cfg.norm_eps);
  const Value v = push(Op{Kind::norm, x.id}, std::move(y));
  rstd_[v.id] = std::move(rstd);
  return v;
}

template <class R>
Value CpuGraph<R>::add(Value a, Value b) {
  return push(Op{Kind::add, a.id, b.id}, values_[a.id] + values_[b.id]);
}

template <class R>
Value CpuGraph<R>::scale(Value a, const Scalars& s) {
  return push(Op{Kind::scale, a.id, -1, s.at(0)}, values_[a.id] * R(s.at(0)));
}

template <class R>
Value CpuGraph<R>::branch(int k, Value u, bool qkv_norm) {
  auto br = make_cpu_branch<R>(shape_, placement_, k, key_, qkv_norm, hooks_);
  Mat<R> out = br->forward(values_[u.id], ws_);
  branch_sq[k] = out.template cast<double>().squaredNorm() / double(out.size());
  const Value v = push(Op{Kind::branch, u.id, -1, 0, k}, std::move(out));
  branches_[v.id] = std::move(br);
  return v;
}

template <class R>
Scalars CpuGraph<R>::mean_sq(Value a) {
  const Mat<R>& m = values_[a.id];
  return Scalars{m.template cast<double>().squaredNorm() / double(m.size())};
}

template <class R>
void CpuGraph<R>::accumulate(int id, const Mat<R>& g) {
  if (grads_[id].size() == 0)
    grads_[id] = g;
  else
    grads_[id] += g;
}

template <class R>
template <class NormsOf>
void CpuGraph<R>::reverse(Value out, const Mat<R>& dout, int floor, NormsOf norms_of) {
  grads_.assign(values_.size(), Mat<R>());
  grads_[out.id] = dout;
  for (int i = out.id; i > floor; --i) {
    if (grads_[i].size() == 0) continue;  // does not reach the loss
    const Op& op = ops_[i];
    const Mat<R>& g = grads_[i];
    switch (op.kind) {
      case Kind::input:
        break;
      case Kind::add:
        accumulate(op.a, g);
        accumulate(op.b, g);
        break;
      case Kind::scale:
        accumulate(op.a, g * R(op.s));
        break;
      case Kind::norm: {
        if (vocab::is_pointwise(shape_.norm)) {  // dx = dy f'(x), entry by entry
          const PointwiseNorm f{shape_.norm, shape_.cfg.norm_gain, op.at.alpha, op.at.shift};
          accumulate(op.a, g.binaryExpr(values_[op.a],
                                        [&](R dy, R v) { return R(double(dy) * f.slope(double(v))); }));
          break;
        }
        const Mat<R>& y = values_[i];
        Mat<R> dx(y.rows(), y.cols());
        for (Eigen::Index t = 0; t < y.rows(); ++t)
          row_norm_backward(shape_.norm, y.row(t).data(), g.row(t).data(), dx.row(t).data(), int(y.cols()),
                            shape_.cfg.norm_gain, rstd_[i][t], false);
        accumulate(op.a, dx);
        break;
      }
      case Kind::branch:
        accumulate(op.a, branches_[i]->backward(values_[op.a], g, ws_, norms_of(op.k)));
        break;
    }
  }
}

template <class R>
void CpuGraph<R>::backward(Value out, const Mat<R>& dout) {
  reverse(out, dout, -1, [this](int k) -> WeightGradNorms& { return gradw[k]; });
  // A value the loss does not depend on has a zero gradient (ReZero at alpha = 0 reaches here).
  for (std::size_t i = 0; i < grads_.size(); ++i)
    if (grads_[i].size() == 0) grads_[i] = Mat<R>::Zero(values_[i].rows(), values_[i].cols());
}

template <class R>
std::vector<Mat<R>> CpuGraph<R>::vjp(Value out, const Mat<R>& u, const std::vector<Value>& watch) {
  int floor = out.id;
  for (const Value w : watch) floor = std::min(floor, w.id);
  WeightGradNorms discarded;
  reverse(out, u, floor, [&discarded](int) -> WeightGradNorms& { return discarded; });
  std::vector<Mat<R>> out_grads;
  for (const Value w : watch)
    out_grads.push_back(grads_[w.id].size() ? grads_[w.id]
                                            : Mat<R>::Zero(values_[w.id].rows(), values_[w.id].cols()));
  return out_grads;
}

template class CpuGraph<float>;
template class CpuGraph<double>;

}  // namespace normsim::sim
