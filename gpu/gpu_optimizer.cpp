#include "gpu/gpu_optimizer.hpp"

#include "gpu/blas.hpp"
#include "gpu/ops.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
void GpuOptimizerDevice<R>::open(State& s, bool adam, std::size_t n) const {
  s.n = n;
  if (!adam) {
    s.grad = DeviceBuffer<R>(n * S_);
    return;
  }
  for (DeviceBuffer<R>* b : {&s.disp, &s.m, &s.v}) {
    *b = DeviceBuffer<R>(n * S_);
    b->zero();
  }
}

template <class R>
void GpuOptimizerDevice<R>::take(State& s, const std::optional<sim::AdamStep>& moments, double mult,
                                 const R* d_a, const R* d_b, int n_in, int n_out) {
  if (moments && product_.size() < s.n * S_) product_ = DeviceBuffer<R>(s.n * S_);
  R* d_g = moments ? product_.get() : s.grad.get();
  gemm<R>(blas_, true, false, n_in, n_out, T_, 1.0, d_a, n_in, (long long)T_ * n_in, d_b, n_out,
          (long long)T_ * n_out, 0.0, d_g, n_out, (long long)n_in * n_out, S_);
  if (moments) adam_accumulate(d_g, s.m.get(), s.v.get(), s.n * S_, mult, *moments);
}

template <class R>
void GpuOptimizerDevice<R>::sum(State& s) const {
  const std::size_t n = s.n * S_;
  if (s.grad_sum.empty()) {
    s.grad_sum = DeviceBuffer<R>(n);
    copy_on_device(s.grad_sum.get(), s.grad.get(), n * sizeof(R));
  } else {
    scaled_sum(s.grad_sum.get(), s.grad.get(), static_cast<const double*>(nullptr),
               static_cast<const R*>(nullptr), n, 1, true);
  }
}

template <class R>
void GpuOptimizerDevice<R>::displace(State& s, const sim::AdamStep& a, double mult) const {
  adam_displace(s.disp.get(), s.m.get(), s.v.get(), s.n * S_, mult, a);
}

template <class R>
void GpuOptimizerDevice<R>::subtract_sum(const State& s, R* d_w, double lr) const {
  gradient_step(d_w, s.grad_sum.get(), s.n * S_, lr, false, 0.0);
}

template <class R>
void GpuOptimizerDevice<R>::add_displacement(const State& s, R* d_w) const {
  scaled_sum(d_w, s.disp.get(), static_cast<const double*>(nullptr), static_cast<const R*>(nullptr), s.n * S_,
             1, true);
}

template class GpuOptimizerDevice<float>;
template class GpuOptimizerDevice<double>;
template class GpuOptimizer<float>;
template class GpuOptimizer<double>;

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
