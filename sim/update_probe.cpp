// The coordinate-check sizes of a step's updates (sim/update_probe.hpp).
#include "sim/update_probe.hpp"

#include <cmath>

namespace normsim::sim {

UpdateSizes::UpdateSizes(int depth) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::array<double, kWeightKinds> none;
  none.fill(nan);
  dwx.assign(std::size_t(depth), none);
  rel_dw.assign(std::size_t(depth), none);
  edge_dwx.fill(nan);
  edge_rel_dw.fill(nan);
}

template <class R>
void UpdateProbe<R>::step(const Key& key, const Mat<R>& W0, const Mat<R>& Ws) {
  Entry& e = entries_[key];
  e.dW = Ws - W0;
  e.rel_dw = std::sqrt(e.dW.template cast<double>().squaredNorm() / W0.template cast<double>().squaredNorm());
}

template <class R>
void UpdateProbe<R>::product(const Key& key, const Mat<R>& x) {
  const auto it = entries_.find(key);
  if (it == entries_.end()) return;  // not stepped (step 0 has no update)
  it->second.dwx = Mat<R>(x * it->second.dW).template cast<double>().cwiseAbs().mean();
}

template <class R>
void UpdateProbe<R>::stepped(int k, WeightKind w, const Mat<R>& W0, const Mat<R>& Ws) {
  step({k, int(w)}, W0, Ws);
}

template <class R>
void UpdateProbe<R>::stepped_edge(Edge e, const Mat<R>& W0, const Mat<R>& Ws) {
  step({-1, int(e)}, W0, Ws);
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
  for (const auto& [key, e] : entries_) {
    const auto [k, w] = key;
    if (k < 0) {
      out.edge_dwx[std::size_t(w)] = e.dwx;
      out.edge_rel_dw[std::size_t(w)] = e.rel_dw;
    } else if (k < depth) {
      out.dwx[std::size_t(k)][std::size_t(w)] = e.dwx;
      out.rel_dw[std::size_t(k)][std::size_t(w)] = e.rel_dw;
    }
  }
  return out;
}

template class UpdateProbe<float>;
template class UpdateProbe<double>;

}  // namespace normsim::sim
