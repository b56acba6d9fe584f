// The Jacobian metrics of one batch on the device (BatchRun's probes; sim/jacobian_probes.cpp is the
// specification): the same probe directions (Philox streams jacobian_probe and block_probe of (seed,
// sample)), the same reverse passes. The CPU reverses one tape again and again; the device tape frees as
// its reverse pass goes, so each probe's pass runs on a tape rebuilt for it (the stack's from x_0, a block's
// from the first stream of its placement unit, Admin's omega replayed), at the cost of one more forward
// pass per probe. Only in the whole-tape plan (the backend refuses the Jacobian metrics with checkpoints).
#include <cmath>

#include "gpu/batch_run.hpp"
#include "gpu/kernels.hpp"
#include "sim/jacobian_probes.hpp"
#include "sim/metrics.hpp"
#include "sim/unit_plan.hpp"

namespace normsim::gpu {

template <class R>
DeviceBuffer<R> BatchRun<R>::probe(std::uint32_t layer, sim::Stream stream, const double* d_ones) const {
  DeviceBuffer<R> u(S_ * per_);
  gaussian_fill(u.get(), per_, S_, ids_.get(), config_.seed, layer, stream, 1.0);
  // Each sample's direction over its norm: random_update_scales with ||W||^2 = 1 gives 1 / ||u||.
  DeviceBuffer<double> sq(S_), factor(S_);
  sample_dot(u.get(), u.get(), per_, S_, sq.get());
  random_update_scales(d_ones, sq.get(), 1.0, factor.get(), S_);
  scaled_sum(u.get(), u.get(), factor.get(), static_cast<const R*>(nullptr), per_, S_, false);
  return u;
}

// jac_sq and jac_spread: per probe, the stack rebuilt and reversed from x_K with u, ||J_{K,l}^T u||^2 of
// every stream l.
template <class R>
void BatchRun<R>::stack_probes(const GpuContext<R>& ctx, const double* d_ones) {
  const int K = shape_.depth, P = probes_;
  DeviceBuffer<double> q(std::size_t(K + 1) * P * S_);
  for (int p = 0; p < P; ++p) {
    GpuTape<R> g(shape_, placement_, ctx);
    sim::PlacementState replay = replay_state();
    const sim::StackValues sv = sim::build_segment(g, shape_, placement_, g.input(input()), 0, K, replay);
    g.release_forward({});
    const auto measure = [&](int l, const DeviceBuffer<R>& grad) {
      sample_dot(grad.get(), grad.get(), per_, S_, q.get() + (std::size_t(l) * P + p) * S_);
    };
    g.reverse(sv.stream.back(), probe(std::uint32_t(p), sim::Stream::jacobian_probe, d_ones), sv.stream,
              measure, kConsumingReverse);
  }
  q_ = q.to_host();
}

// block_identity_dev: per block k and probe, the block's placement unit rebuilt from its first stream and
// reversed from x_{k+1} with u down to x_k: ||(J_k - I)^T u||^2 = ||J_k^T u - u||^2.
template <class R>
void BatchRun<R>::block_probes(const GpuContext<R>& ctx, const double* d_ones) {
  const int K = shape_.depth, P = probes_, span = sim::unit_sublayers(placement_, shape_);
  DeviceBuffer<double> b(std::size_t(K) * P * S_);
  for (int k = 0; k < K; ++k) {
    const int first = k / span * span, last = std::min(K, first + span);
    for (int p = 0; p < P; ++p) {
      GpuTape<R> g(shape_, placement_, ctx);
      sim::PlacementState replay = replay_state();
      // x_0 is stored after the input norm, which build_segment applies to the raw input itself.
      DeviceBuffer<R> x = first == 0 ? input() : copy(first_stream(first));
      const sim::StackValues sv =
          sim::build_segment(g, shape_, placement_, g.input(std::move(x)), first, last, replay);
      const DeviceBuffer<R> u = probe(std::uint32_t(k * P + p), sim::Stream::block_probe, d_ones);
      g.release_forward({});
      const auto measure = [&](int, const DeviceBuffer<R>& grad) {
        sample_distance_sq(grad.get(), u.get(), per_, S_, b.get() + (std::size_t(k) * P + p) * S_);
      };
      g.reverse(sv.stream[k - first + 1], copy(u.get()), {sv.stream[k - first]}, measure, kConsumingReverse);
    }
  }
  b_ = b.to_host();
}

template <class R>
void BatchRun<R>::jacobian_passes() {
  DeviceStats discarded(shape_.depth, S_);  // the probes' own branch statistics are not metrics
  const GpuContext<R> ctx = side_context(discarded, nullptr);
  const DeviceBuffer<double> ones = DeviceBuffer<double>::from_host(std::vector<double>(S_, 1.0));
  if (jacobians_.stack) stack_probes(ctx, ones.get());
  if (jacobians_.blocks) block_probes(ctx, ones.get());
}

template <class R>
void BatchRun<R>::add_jacobians(int s, sim::SampleScalars& r) const {
  namespace m = sim::metric;
  const int K = shape_.depth, P = probes_;
  const double n = double(per_);
  std::vector<double> q(P);
  for (int l = 0; l <= K && !q_.empty(); ++l) {
    for (int p = 0; p < P; ++p) q[p] = q_[(std::size_t(l) * P + p) * S_ + s];
    double mean = 0;
    for (const double v : q) mean += v / P;
    r.values[m::jac_sq][l] = mean;
    if (P >= 2) r.values[m::jac_spread][l] = sim::relative_spectral_variance(q, n);
  }
  for (int k = 0; k < K && !b_.empty(); ++k) {
    double sum = 0;
    for (int p = 0; p < P; ++p) sum += b_[(std::size_t(k) * P + p) * S_ + s];
    r.values[m::block_identity_dev][k] = std::sqrt(sum / P);
  }
}

// The members defined here, for both precisions (the class itself is instantiated in batch_run.cpp).
#define NORMSIM_BATCH_JACOBIANS(R)                                                              \
  template DeviceBuffer<R> BatchRun<R>::probe(std::uint32_t, sim::Stream, const double*) const; \
  template void BatchRun<R>::stack_probes(const GpuContext<R>&, const double*);                 \
  template void BatchRun<R>::block_probes(const GpuContext<R>&, const double*);                 \
  template void BatchRun<R>::jacobian_passes();                                                 \
  template void BatchRun<R>::add_jacobians(int, sim::SampleScalars&) const;
NORMSIM_BATCH_JACOBIANS(float)
NORMSIM_BATCH_JACOBIANS(double)

}  // namespace normsim::gpu
