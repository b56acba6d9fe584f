#include "gpu/gpu_update_probe.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpu/gpu_weights.hpp"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
void GpuUpdateProbe<R>::stepped(int k, int w, const R* d_w0, const R* d_ws, int n_in, int n_out) {
  Entry& e = entries_[{k, w}];
  if (e.measured) return;
  const std::size_t n = std::size_t(n_in) * n_out;
  e.n_in = n_in, e.n_out = n_out;
  if (e.dw.size() != n * S_) {  // a spare of as many entries, else a new buffer
    const auto spare = std::find_if(spares_.begin(), spares_.end(),
                                    [&](const DeviceBuffer<R>& b) { return b.size() == n * S_; });
    if (spare != spares_.end()) {
      e.dw = std::move(*spare);
      spares_.erase(spare);
    } else {
      e.dw = DeviceBuffer<R>(n * S_);
    }
  }
  if (e.sums.empty()) e.sums = DeviceBuffer<double>(3 * std::size_t(S_));
  // dW = W_s + (-1) W_0: one rounding in R, as the CPU's Ws - before_.
  copy_on_device(e.dw.get(), d_ws, n * S_ * sizeof(R));
  scaled_sum(e.dw.get(), d_w0, minus_one_.get(), static_cast<const R*>(nullptr), n * S_, 1, true);
  sample_dot(e.dw.get(), e.dw.get(), n, S_, e.sums.get());
  sample_dot(d_w0, d_w0, n, S_, e.sums.get() + S_);
}

template <class R>
void GpuUpdateProbe<R>::input(int k, int w, const R* d_x) {
  const auto it = entries_.find({k, w});
  if (it == entries_.end() || it->second.measured) return;
  Entry& e = it->second;
  DeviceBuffer<R> xdw(std::size_t(S_) * T_ * e.n_out);
  times_weight(blas_, d_x, e.dw.get(), xdw.get(), S_, T_, e.n_in, e.n_out, false, false);
  sample_abs_distance(xdw.get(), static_cast<const R*>(nullptr), std::size_t(T_) * e.n_out, S_,
                      e.sums.get() + 2 * std::size_t(S_));
  e.measured = true;
  spares_.push_back(std::move(e.dw));
}

template <class R>
void GpuUpdateProbe<R>::copy_to_host() {
  for (auto& [key, e] : entries_) e.host = e.sums.to_host();
}

template <class R>
sim::UpdateSizes GpuUpdateProbe<R>::sizes(int s, int depth) const {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  sim::UpdateSizes out(depth);
  for (const auto& [key, e] : entries_) {
    const auto [k, w] = key;
    const double rel = std::sqrt(e.host[s] / e.host[S_ + s]);
    const double dwx = e.measured ? e.host[2 * S_ + s] / (double(T_) * e.n_out) : nan;
    out.put(k, w, dwx, rel);
  }
  return out;
}

template class GpuUpdateProbe<float>;
template class GpuUpdateProbe<double>;

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
