// The device of the Jacobian probes (sim/jacobian_probes.hpp, which runs them) for one batch of S samples:
// probe directions drawn on the device, squared norms summed per sample on it and brought to the host once
// at the end. The device tape frees as its reverse pass goes, so each probe's pass runs on a tape rebuilt
// for it (the stack's from x_0, a block's from the first stream of its placement unit, Admin's omega
// replayed), at the cost of one more forward pass per probe. Only in the whole-tape plan (the backend
// refuses the Jacobian metrics with checkpoints).
#include <algorithm>
#include <vector>

#include "gpu/batch_run.hpp"
#include "gpu/ops.hpp"
#include "sim/metrics.hpp"
#include "sim/unit_plan.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

template <class R>
class BatchRun<R>::JacobianDevice {
 public:
  using Direction = DeviceBuffer<R>;
  using Sums = DeviceBuffer<double>;
  static constexpr bool rebuilds_tape = true;

  // ctx: where the probes' passes run (their branch statistics discarded).
  JacobianDevice(const BatchRun& run, const GpuContext<R>& ctx)
      : run_(run), ctx_(ctx), ones_(DeviceBuffer<double>::from_host(std::vector<double>(run.S_, 1.0))) {}

  int samples() const { return run_.S_; }
  double entries() const { return double(run_.per_); }
  DeviceBuffer<R> direction(std::uint32_t index, sim::Stream stream) const;
  DeviceBuffer<R> tangent(DeviceBuffer<R>&& u) const { return std::move(u); }
  DeviceBuffer<R> tangent(const DeviceBuffer<R>& u) const { return run_.copy(u.get()); }
  Sums sums(std::size_t slots) const { return Sums(slots * run_.S_); }
  void squared_norm(const DeviceBuffer<R>& g, Sums& sums, std::size_t slot) const {
    sample_dot(g.get(), g.get(), run_.per_, run_.S_, sums.get() + slot * run_.S_);
  }
  void squared_distance(const DeviceBuffer<R>& g, const DeviceBuffer<R>& u, Sums& sums,
                        std::size_t slot) const {
    sample_distance_sq(g.get(), u.get(), run_.per_, run_.S_, sums.get() + slot * run_.S_);
  }
  static std::vector<double> host(const Sums& sums) { return sums.to_host(); }
  template <class Pass>
  void with_tape(int from, int to, Pass&& pass) const;

 private:
  const BatchRun& run_;
  GpuContext<R> ctx_;
  DeviceBuffer<double> ones_;
};

template <class R>
DeviceBuffer<R> BatchRun<R>::JacobianDevice::direction(std::uint32_t index, sim::Stream stream) const {
  const int S = run_.S_;
  DeviceBuffer<R> u(S * run_.per_);
  gaussian_fill(u.get(), run_.per_, S, run_.ids_.get(), run_.config_.seed, index, stream, 1.0);
  // Each sample's direction over its norm: random_update_scales with ||W||^2 = 1 gives 1 / ||u||.
  DeviceBuffer<double> sq(S), factor(S);
  sample_dot(u.get(), u.get(), run_.per_, S, sq.get());
  random_update_scales(ones_.get(), sq.get(), 1.0, factor.get(), S);
  scaled_sum(u.get(), u.get(), factor.get(), static_cast<const R*>(nullptr), run_.per_, S, false);
  return u;
}

// The placement units that hold x_from..x_to rebuilt on a tape of their own, from the first pass's kept
// stream (x_0 from the raw input, to which build_segment applies the input norm itself), its forward values
// no reverse pass reads freed.
template <class R>
template <class Pass>
void BatchRun<R>::JacobianDevice::with_tape(int from, int to, Pass&& pass) const {
  const int K = run_.shape_.depth, span = sim::unit_sublayers(run_.placement_, run_.shape_);
  const int first = from / span * span, last = std::min(K, (to + span - 1) / span * span);
  GpuTape<R> g(run_.shape_, run_.placement_, ctx_);
  sim::PlacementState replay = run_.replay_state();
  DeviceBuffer<R> x = first == 0 ? run_.input(run_.batch_) : run_.copy(run_.first_stream(first));
  const sim::StackValues sv =
      sim::build_segment(g, run_.shape_, run_.placement_, g.input(std::move(x)), first, last, replay);
  g.release_forward({});
  pass(g, sv.stream, first);
}

template <class R>
void BatchRun<R>::jacobian_passes() {
  DeviceStats discarded(shape_.depth, S_);  // the probes' own branch statistics are not metrics
  JacobianDevice dev(*this, side_context(discarded, ctx_.apply));  // a training step's W_s
  jacobian_sums_ = sim::probe_jacobians(dev, shape_.depth, probes_, jacobians_);
}

template <class R>
void BatchRun<R>::add_jacobians(int s, sim::SampleScalars& r) const {
  namespace m = sim::metric;
  const sim::JacobianEstimates e = jacobian_sums_.of_sample(s);
  std::copy(e.jac_sq.begin(), e.jac_sq.end(), r.values[m::jac_sq].begin());
  std::copy(e.jac_spread.begin(), e.jac_spread.end(), r.values[m::jac_spread].begin());
  std::copy(e.block_identity_dev.begin(), e.block_identity_dev.end(),
            r.values[m::block_identity_dev].begin());
}

// The members defined here, for both precisions (the class itself is instantiated in batch_run.cpp).
#define NORMSIM_BATCH_JACOBIANS(R)              \
  template void BatchRun<R>::jacobian_passes(); \
  template void BatchRun<R>::add_jacobians(int, sim::SampleScalars&) const;
NORMSIM_BATCH_JACOBIANS(float)
NORMSIM_BATCH_JACOBIANS(double)

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
