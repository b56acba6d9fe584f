#include "sim/cpu/cpu_tape_device.hpp"

#include <limits>

#include "sim/draws.hpp"
#include "sim/edges.hpp"
#include "sim/rownorm.hpp"

namespace normsim::sim {

template <class R>
CpuTapeDevice<R>::CpuTapeDevice(const StackShape& shape, const Placement& placement, SampleKey key,
                                CpuWorkspace<R>* ws, UpdateHooks<R> hooks)
    : shape_(shape), placement_(placement), key_(key), ws_(ws ? *ws : own_ws_), hooks_(hooks) {
  ++ws_.pass;  // weights kept by an earlier pass are not this pass's
  const double nan = std::numeric_limits<double>::quiet_NaN();
  branch_sq.assign(shape.depth, nan);
  WeightGradNorms none;
  none.fill(nan);
  gradw.assign(shape.depth, none);
}

template <class R>
Mat<R> CpuTapeDevice<R>::norm(const Mat<R>& x, NormAt at, Aux& rstd) const {
  if (vocab::is_pointwise(shape_.norm)) {
    const PointwiseNorm f{shape_.norm, shape_.cfg.norm_gain, at.alpha, at.shift};
    return x.unaryExpr([&](R v) { return R(f(double(v))); });
  }
  Mat<R> y(x.rows(), x.cols());
  rstd.resize(x.rows());
  for (Eigen::Index t = 0; t < x.rows(); ++t)
    rstd[t] = row_norm_forward(shape_.norm, x.row(t).data(), y.row(t).data(), int(x.cols()),
                               shape_.cfg.norm_gain, shape_.cfg.norm_eps);
  return y;
}

template <class R>
Mat<R> CpuTapeDevice<R>::scale(const Mat<R>& a, const Scalars& s, Aux& factors) const {
  factors = {s.at(0)};
  return a * R(s.at(0));
}

template <class R>
Scalars CpuTapeDevice<R>::mean_sq(const Mat<R>& a) const {
  return Scalars{a.template cast<double>().squaredNorm() / double(a.size())};
}

template <class R>
std::unique_ptr<CpuBranch<R>> CpuTapeDevice<R>::make_branch(int k, bool qkv_norm) const {
  return make_cpu_branch<R>(shape_, placement_, k, key_, qkv_norm, hooks_);
}

template <class R>
Mat<R> CpuTapeDevice<R>::branch_forward(CpuBranch<R>& br, const Mat<R>& u, int k) {
  Mat<R> out = br.forward(u, ws_);
  branch_sq[k] = out.template cast<double>().squaredNorm() / double(out.size());
  return out;
}

template <class R>
void CpuTapeDevice<R>::add_to(Mat<R>& into, const Mat<R>& g) const {
  if (empty(into))
    into = g;
  else
    into += g;
}

template <class R>
void CpuTapeDevice<R>::add_to(Mat<R>& into, Mat<R>&& g) const {
  if (empty(into))
    into = std::move(g);
  else
    into += g;
}

template <class R>
void CpuTapeDevice<R>::add_scaled_to(Mat<R>& into, const Mat<R>& g, const Aux& factors) const {
  add_to(into, Mat<R>(g * R(factors.at(0))));
}

template <class R>
void CpuTapeDevice<R>::norm_backward_to(Mat<R>& into, const Mat<R>& x, const Mat<R>& y, const Mat<R>& g,
                                        const Aux& rstd, NormAt at) const {
  if (vocab::is_pointwise(shape_.norm)) {  // dx = dy f'(x), entry by entry
    const PointwiseNorm f{shape_.norm, shape_.cfg.norm_gain, at.alpha, at.shift};
    add_to(into, Mat<R>(g.binaryExpr(x, [&](R dy, R v) { return R(double(dy) * f.slope(double(v))); })));
    return;
  }
  Mat<R> dx(y.rows(), y.cols());
  for (Eigen::Index t = 0; t < y.rows(); ++t)
    row_norm_backward(shape_.norm, y.row(t).data(), g.row(t).data(), dx.row(t).data(), int(y.cols()),
                      shape_.cfg.norm_gain, rstd[t], false);
  add_to(into, std::move(dx));
}

template <class R>
Mat<R> CpuTapeDevice<R>::branch_backward(CpuBranch<R>& br, const Mat<R>& u, const Mat<R>& g, int k,
                                         bool record_gradw) {
  WeightGradNorms discarded;
  return br.backward(u, g, ws_, record_gradw ? gradw[k] : discarded);
}

template <class R>
Mat<R>& CpuTapeDevice<R>::edge_matrix(Edge e) {
  Mat<R>& W = edges_[std::size_t(e)];
  if (W.size() > 0) return W;
  const EdgeDims d = edge_dims(shape_.cfg, e);
  W.resize(d.rows, d.cols);
  fill_gaussian(W.data(), std::size_t(W.size()),
                DrawKey{key_.seed, key_.sample, edge_layer(shape_.cfg, e), edge_stream(e)},
                edge_std(shape_, e), ws_.threads);
  if (hooks_.apply) hooks_.apply_edge(e, W);
  return W;
}

template <class R>
void CpuTapeDevice<R>::project_backward_to(Mat<R>& into, const Mat<R>& a, const Mat<R>& g, Edge e,
                                           bool a_grad) {
  if (a_grad) add_to(into, Mat<R>(g * edge_matrix(e).transpose()));
  if (hooks_.record && hooks_.record->needs_gradients())
    hooks_.record->set_edge_gradient(e, a.transpose() * g);
}

template class CpuTapeDevice<float>;
template class CpuTapeDevice<double>;
template class Tape<CpuTapeDevice<float>>;
template class Tape<CpuTapeDevice<double>>;

}  // namespace normsim::sim
