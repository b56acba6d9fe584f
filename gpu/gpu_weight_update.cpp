#include "gpu/gpu_weight_update.hpp"

#include <stdexcept>
#include <string>

#include "gpu/blas.hpp"
#include "gpu/kernels.hpp"
#include "gpu/memory_plan.hpp"
#include "sim/edges.hpp"
#include "sim/weight_update.hpp"

namespace normsim::gpu {

template <class R>
GpuWeightUpdate<R>::GpuWeightUpdate(const sim::Config& c, cublasHandle_t blas, int S,
                                    const std::uint32_t* d_samples)
    : kind_(c.steps > 0 ? vocab::Update::none : c.update),
      lr_(c.update_lr),
      scale_(c.update_scale),
      eps_(c.adam_eps),
      seed_(c.seed),
      blas_(blas),
      S_(S),
      T_(c.tokens),
      d_samples_(d_samples) {
  if (needs_gradients()) grads_.resize(std::size_t(c.depth));
}

template <class R>
bool GpuWeightUpdate<R>::needs_gradients() const {
  return sim::steps_on_loss(kind_);
}

template <class R>
void GpuWeightUpdate<R>::record(int k, sim::WeightKind w, const R* d_a, const R* d_b, int n_in, int n_out,
                                sim::Part part) {
  if (!needs_gradients() || sealed_) return;
  record_into(grads_.at(std::size_t(k))[sim::param_slot(w, part)], d_a, d_b, n_in, n_out);
}

template <class R>
void GpuWeightUpdate<R>::record_edge(sim::Edge e, const R* d_a, const R* d_b, int n_in, int n_out) {
  if (!needs_gradients() || sealed_) return;
  record_into(edge_grads_[std::size_t(e)], d_a, d_b, n_in, n_out);
}

template <class R>
void GpuWeightUpdate<R>::record_into(Recorded& r, const R* d_a, const R* d_b, int n_in, int n_out) const {
  const std::size_t na = std::size_t(S_) * T_ * n_in, nb = std::size_t(S_) * T_ * n_out;
  if (gradient_by_factors(T_, n_in, n_out)) {
    r.a = DeviceBuffer<R>(na);
    r.b = DeviceBuffer<R>(nb);
    copy_on_device(r.a.get(), d_a, na * sizeof(R));
    copy_on_device(r.b.get(), d_b, nb * sizeof(R));
    return;
  }
  r.g = DeviceBuffer<R>(std::size_t(S_) * n_in * n_out);
  product(d_a, d_b, r.g.get(), n_in, n_out);
}

template <class R>
void GpuWeightUpdate<R>::product(const R* d_a, const R* d_b, R* d_g, int n_in, int n_out) const {
  gemm<R>(blas_, true, false, n_in, n_out, T_, 1.0, d_a, n_in, (long long)T_ * n_in, d_b, n_out,
          (long long)T_ * n_out, 0.0, d_g, n_out, (long long)n_in * n_out, S_);
}

template <class R>
void GpuWeightUpdate<R>::apply(int k, sim::WeightKind w, R* d_w, int n_in, int n_out, sim::Part part) const {
  const std::size_t n = std::size_t(n_in) * n_out;
  switch (kind_) {
    case vocab::Update::none:
      return;
    case vocab::Update::random: {
      DeviceBuffer<R> G(n * S_);
      const auto stream = sim::update_stream(w, part);
      gaussian_fill(G.get(), n, S_, d_samples_, seed_, std::uint32_t(k), stream, 1.0);
      DeviceBuffer<double> sq(2 * std::size_t(S_)), factor(S_);
      sample_dot(d_w, d_w, n, S_, sq.get());
      sample_dot(G.get(), G.get(), n, S_, sq.get() + S_);
      random_update_scales(sq.get(), sq.get() + S_, scale_, factor.get(), S_);
      scaled_sum(d_w, G.get(), factor.get(), static_cast<const R*>(nullptr), n, S_, true);
      return;
    }
    case vocab::Update::sgd:
    case vocab::Update::adam:
      break;
  }
  step(grads_.at(std::size_t(k))[sim::param_slot(w, part)], d_w, n_in, n_out,
       std::string(sim::weight_name(w)) + (part == sim::Part::bias ? "'s bias" : "") + " at sublayer " +
           std::to_string(k));
}

template <class R>
void GpuWeightUpdate<R>::apply_edge(sim::Edge e, R* d_w, int n_in, int n_out) const {
  if (needs_gradients())
    step(edge_grads_[std::size_t(e)], d_w, n_in, n_out, "the " + std::string(sim::edge_name(e)));
}

template <class R>
void GpuWeightUpdate<R>::step(const Recorded& r, R* d_w, int n_in, int n_out, const std::string& what) const {
  const std::size_t n = std::size_t(n_in) * n_out;
  if (r.g.empty() && r.a.empty()) throw std::logic_error("CUDA weight update: no gradient of " + what);
  DeviceBuffer<R> g;  // the product of the factors
  if (!r.a.empty()) {
    g = DeviceBuffer<R>(n * S_);
    product(r.a.get(), r.b.get(), g.get(), n_in, n_out);
  }
  gradient_step(d_w, g.empty() ? r.g.get() : g.get(), n * S_, lr_, kind_ == vocab::Update::adam, eps_);
}

template class GpuWeightUpdate<float>;
template class GpuWeightUpdate<double>;

}  // namespace normsim::gpu
