#include "gpu/gpu_weight_update.hpp"

#include "gpu/blas.hpp"
#include "gpu/memory_plan.hpp"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
void GpuUpdateDevice<R>::keep(Gradient& kept, const R* d_a, const R* d_b, int n_in, int n_out) const {
  const std::size_t na = std::size_t(S_) * T_ * n_in, nb = std::size_t(S_) * T_ * n_out;
  if (gradient_by_factors(T_, n_in, n_out)) {
    kept.a = DeviceBuffer<R>(na);
    kept.b = DeviceBuffer<R>(nb);
    copy_on_device(kept.a.get(), d_a, na * sizeof(R));
    copy_on_device(kept.b.get(), d_b, nb * sizeof(R));
    return;
  }
  kept.g = DeviceBuffer<R>(std::size_t(S_) * n_in * n_out);
  product(d_a, d_b, kept.g.get(), n_in, n_out);
}

template <class R>
void GpuUpdateDevice<R>::product(const R* d_a, const R* d_b, R* d_g, int n_in, int n_out) const {
  gemm<R>(blas_, true, false, n_in, n_out, T_, 1.0, d_a, n_in, (long long)T_ * n_in, d_b, n_out,
          (long long)T_ * n_out, 0.0, d_g, n_out, (long long)n_in * n_out, S_);
}

template <class R>
void GpuUpdateDevice<R>::descend(const Matrix& W, const Gradient& g, double lr,
                                 std::optional<double> adam_eps) const {
  const std::size_t n = std::size_t(W.n_in) * W.n_out;
  DeviceBuffer<R> product_of_factors;
  if (!g.a.empty()) {
    product_of_factors = DeviceBuffer<R>(n * S_);
    product(g.a.get(), g.b.get(), product_of_factors.get(), W.n_in, W.n_out);
  }
  gradient_step(W.d_w, g.a.empty() ? g.g.get() : product_of_factors.get(), n * S_, lr, adam_eps.has_value(),
                adam_eps.value_or(0.0));
}

template <class R>
void GpuUpdateDevice<R>::add_random(const Matrix& W, std::uint32_t k, sim::Stream stream,
                                    double scale) const {
  const std::size_t n = std::size_t(W.n_in) * W.n_out;
  DeviceBuffer<R> G(n * S_);
  gaussian_fill(G.get(), n, S_, d_samples_, seed_, k, stream, 1.0);
  DeviceBuffer<double> sq(2 * std::size_t(S_)), factor(S_);
  sample_dot(W.d_w, W.d_w, n, S_, sq.get());
  sample_dot(G.get(), G.get(), n, S_, sq.get() + S_);
  random_update_scales(sq.get(), sq.get() + S_, scale, factor.get(), S_);
  scaled_sum(W.d_w, G.get(), factor.get(), static_cast<const R*>(nullptr), n, S_, true);
}

template class GpuUpdateDevice<float>;
template class GpuUpdateDevice<double>;
template class GpuWeightUpdate<float>;
template class GpuWeightUpdate<double>;

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
