// The CPU's probe of a step's update sizes (sim/cpu/update_probe.hpp).
#include "sim/cpu/update_probe.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace normsim::sim {

template <class R>
Mat<R> UpdateProbe<R>::spare(Eigen::Index rows, Eigen::Index cols) {
  Mat<R> m;
  const auto it =
      std::find_if(spares_.begin(), spares_.end(), [&](const Mat<R>& s) { return s.size() == rows * cols; });
  if (it != spares_.end()) {
    m = std::move(*it);
    spares_.erase(it);
  }
  m.resize(rows, cols);  // keeps the storage of a spare of the same size
  return m;
}

template <class R>
void UpdateProbe<R>::before(const Mat<R>& W0) {
  if (before_.size() != W0.size()) {
    if (before_.size() > 0) spares_.push_back(std::move(before_));
    before_ = spare(W0.rows(), W0.cols());
  }
  before_ = W0;  // the storage of a matrix of as many entries is kept
}

template <class R>
void UpdateProbe<R>::step(const Key& key, const Mat<R>& Ws) {
  Entry& e = entries_[key];
  if (e.dW.size() == 0) e.dW = spare(Ws.rows(), Ws.cols());
  e.dW = Ws - before_;
  e.rel_dw =
      std::sqrt(e.dW.template cast<double>().squaredNorm() / before_.template cast<double>().squaredNorm());
  if (e.measured) spares_.push_back(std::move(e.dW));
}

template <class R>
void UpdateProbe<R>::product(const Key& key, const Mat<R>& x) {
  const auto it = entries_.find(key);
  if (it == entries_.end() || it->second.dW.size() == 0) return;  // not stepped (step 0 has no update)
  Entry& e = it->second;
  e.dwx = Mat<R>(x * e.dW).template cast<double>().cwiseAbs().mean();
  e.measured = true;
  spares_.push_back(std::move(e.dW));
}

template <class R>
void UpdateProbe<R>::stepped(int k, WeightKind w, const Mat<R>& Ws) {
  step({k, int(w)}, Ws);
}

template <class R>
void UpdateProbe<R>::stepped_edge(Edge e, const Mat<R>& Ws) {
  step({-1, int(e)}, Ws);
}

template <class R>
void UpdateProbe<R>::input(int k, WeightKind w, const Mat<R>& x) {
  product({k, int(w)}, x);
}

template <class R>
void UpdateProbe<R>::edge_input(Edge e, const Mat<R>& x) {
  product({-1, int(e)}, x);
}

template <class R>
UpdateSizes UpdateProbe<R>::sizes(int depth) const {
  UpdateSizes out(depth);
  for (const auto& [key, e] : entries_) out.put(key.first, key.second, e.dwx, e.rel_dw);
  return out;
}

template class UpdateProbe<float>;
template class UpdateProbe<double>;

}  // namespace normsim::sim
