#include "gpu/gpu_update_probe.hpp"

#include "gpu/gpu_weights.hpp"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
void GpuUpdateSizes<R>::difference(Buffer& dw, const R* d_w0, const R* d_ws, int n_in, int n_out, Sums& s) {
  const std::size_t n = std::size_t(n_in) * std::size_t(n_out);
  if (s.device.empty()) s.device = DeviceBuffer<double>(3 * std::size_t(S_));
  // dW = W_s + (-1) W_0: one rounding in R, as the CPU's ws - w0.
  copy_on_device(dw.get(), d_ws, n * S_ * sizeof(R));
  scaled_sum(dw.get(), d_w0, minus_one_.get(), static_cast<const R*>(nullptr), n * S_, 1, true);
  sample_dot(dw.get(), dw.get(), n, S_, s.device.get());
  sample_dot(d_w0, d_w0, n, S_, s.device.get() + S_);
}

template <class R>
void GpuUpdateSizes<R>::product(const R* d_x, const Buffer& dw, int n_in, int n_out, Sums& s) {
  DeviceBuffer<R> xdw(std::size_t(S_) * T_ * n_out);
  times_weight(blas_, d_x, dw.get(), xdw.get(), S_, T_, n_in, n_out, false, false);
  sample_abs_distance(xdw.get(), static_cast<const R*>(nullptr), std::size_t(T_) * n_out, S_,
                      s.device.get() + 2 * std::size_t(S_));
  s.count = double(T_) * n_out;
}

template <class R>
sim::UpdateSums GpuUpdateSizes<R>::sums(const Sums& s, int i) const {
  return {s.host[std::size_t(i)], s.host[std::size_t(S_ + i)], s.host[std::size_t(2 * S_ + i)], s.count};
}

template class GpuUpdateSizes<float>;
template class GpuUpdateSizes<double>;

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
