#include "gpu/batch_run.hpp"

#include <algorithm>
#include <vector>

#include "gpu/memory_plan.hpp"
#include "gpu/ops.hpp"
#include "sim/edges.hpp"
#include "sim/single_update.hpp"
#include "sim/statistic_finish.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {
DeviceBuffer<std::uint32_t> sample_ids(std::span<const int> samples) {
  std::vector<std::uint32_t> ids(samples.size());
  for (std::size_t s = 0; s < samples.size(); ++s) ids[s] = std::uint32_t(samples[s]);
  return DeviceBuffer<std::uint32_t>::from_host(ids);
}
}  // namespace

template <class R>
BatchRun<R>::BatchRun(const sim::Config& config, const sim::StackShape& shape,
                      const sim::Placement& placement, const Blas& blas, std::span<const int> samples,
                      bool recompute, DeviceStats& stats, const TrainStep<R>* train)
    : config_(config),
      shape_(shape),
      placement_(placement),
      train_(train),
      batch_(train && train->fresh ? std::uint32_t(train->step) : 0),
      S_(int(samples.size())),
      per_(std::size_t(shape.tokens) * shape.width),
      ids_(sample_ids(samples)),
      scratch_(recompute ? std::size_t(S_) * largest_weight(shape) : 0),
      ctx_{blas.handle(), config.seed, S_, ids_.get(), recompute, &scratch_, &stats},
      stats_(stats),
      measure_(blas.handle(), S_, shape.tokens, shape.width, config.metrics,
               eff_rank_streams(shape.depth, placement.lanes())),
      backward_(config.metrics.any_of(sim::MetricPass::backward) ||
                (train ? train->step < train->steps : sim::steps_on_loss(config.update))),
      update_(config, blas.handle(), S_, ids_.get()),
      first_streams_(update_.active() || sim::JacobianWanted::of(config.metrics).blocks
                         ? std::size_t(shape.depth + 1) * S_ * per_
                         : 0),
      jacobians_(sim::JacobianWanted::of(config.metrics)),
      probes_(config.jacobian_probes) {
  if (update_.needs_gradients()) ctx_.record = &update_;
  if (train) {  // as the CPU's training hooks (sim/cpu/train_loop.cpp): record while a step follows, W_s from
                // step 1 on
    ctx_.record = train->step < train->steps ? train->optimizer : nullptr;
    ctx_.apply = train->step > 0 ? train->optimizer : nullptr;
    ctx_.probe = train->step > 0 ? train->probe : nullptr;
  }
}

template <class R>
DeviceBuffer<R> BatchRun<R>::input(std::uint32_t batch) const {
  const int T = shape_.tokens;
  if (!sim::has_embedding(config_)) {
    DeviceBuffer<R> x0(S_ * per_);
    input_fill(x0.get(), S_, ids_.get(), T, shape_.width, config_.seed, config_.input_std, config_.input_corr,
               batch);
    return x0;
  }
  const int rows = sim::edge_dims(config_, sim::Edge::embedding).rows;
  DeviceBuffer<R> u(std::size_t(S_) * T * rows);
  if (config_.vocab > 0)
    token_onehot_fill(u.get(), S_, ids_.get(), T, rows, config_.seed, batch);
  else
    input_fill(u.get(), S_, ids_.get(), T, rows, config_.seed, config_.input_std, config_.input_corr, batch);
  return u;
}

template <class R>
DeviceBuffer<R> BatchRun<R>::copy(const R* d_x, std::size_t n) const {
  DeviceBuffer<R> y(n > 0 ? n : S_ * per_);
  copy_on_device(y.get(), d_x, y.size() * sizeof(R));
  return y;
}

template <class R>
DeviceBuffer<R> BatchRun<R>::loss_gradient_at(GpuTape<R>& g, const sim::StackValues& sv) const {
  const int width = sim::has_readout(config_) ? config_.output_width : shape_.width;
  DeviceBuffer<R> dz(std::size_t(S_) * shape_.tokens * width);
  loss_gradient(g.value(sv.loss_input()).get(), dz.get(), S_, ids_.get(), shape_.tokens, width, config_.seed,
                config_.loss == vocab::Loss::mse, batch_);
  return dz;
}

template <class R>
void BatchRun<R>::measure_streams(GpuTape<R>& g, const sim::StackValues& sv, int first) {
  const int n = int(sv.stream.size());
  for (int i = 0; i + 1 < n; ++i)
    measure_.stream(g.value(sv.stream[i]).get(), g.value(sv.stream[i + 1]).get(),
                    stats_.field(first + i, lf_stream), stats_.field(first + i, lf_eff_rank));
  if (first + n - 1 < shape_.depth) return;  // x_last is measured with its pair, in the next segment
  const int K = shape_.depth;
  measure_.stream(g.value(sv.stream[n - 1]).get(), nullptr, stats_.field(K, lf_stream),
                  stats_.field(K, lf_eff_rank));
  measure_.tensor(g.value(sv.output).get(), stats_.field(stats_.output_block(), lf_stream));
}

template <class R>
DeviceBuffer<R> BatchRun<R>::backward(GpuTape<R>& g, const sim::StackValues& sv, sim::Value from,
                                      DeviceBuffer<R> dout, int first, int watched) {
  DeviceBuffer<R> d_first;
  const std::vector<sim::Value> watch(sv.stream.begin(), sv.stream.begin() + watched);
  g.release_forward({});
  const auto measure = [&](int i, const DeviceBuffer<R>& grad) {
    measure_.tensor(grad.get(), stats_.field(first + i, lf_grad));
    if (i == 0) d_first = copy(grad.get());
  };
  g.reverse(from, std::move(dout), watch, measure, kConsumingReverse);
  return d_first;
}

template <class R>
void BatchRun<R>::measure_lanes(GpuTape<R>& g, const sim::StackValues& sv) {
  const int K = shape_.depth, n = placement_.lanes();
  for (int l = 0; l <= K; ++l) {
    const sim::Lanes& x = sv.lanes[std::size_t(l)];
    for (int i = 0; i < n; ++i)
      measure_.stream(g.value(x[std::size_t(i)]).get(),
                      l < K ? g.value(sv.lanes[std::size_t(l + 1)][std::size_t(i)]).get() : nullptr,
                      stats_.field(stats_.lane_block(l, i), lf_stream),
                      stats_.field(stats_.lane_block(l, i), lf_eff_rank));
    sim::for_each_lane_pair(n, [&](int i, int j, int p) {
      measure_.tensor(g.value(x[std::size_t(i)]).get(), stats_.lane_pair(l, p),
                      g.value(x[std::size_t(j)]).get());
    });
  }
}

// Every lane at every layer is a Value of its own (sim/stack_build.cpp), watched as watch[l * n + i], and x_0
// last: layer 0's mean gradient is x_0's own (its copies' and emb's together), as on the CPU
// (sim/cpu/cpu_pass.cpp run_backward).
template <class R>
void BatchRun<R>::lanes_backward(GpuTape<R>& g, const sim::StackValues& sv, DeviceBuffer<R> dy) {
  const int n = placement_.lanes();
  std::vector<sim::Value> watch;
  for (const sim::Lanes& x : sv.lanes) watch.insert(watch.end(), x.begin(), x.end());
  watch.push_back(sv.stream.front());
  const int x0 = int(watch.size()) - 1;
  std::vector<DeviceBuffer<R>> sums(sv.lanes.size());
  g.release_forward({});
  const auto add = [&](int w, const DeviceBuffer<R>& grad) {
    if (w == x0) {
      sums[0] = copy(grad.get());
      return;
    }
    const int l = w / n, i = w % n;
    measure_.tensor(grad.get(), stats_.field(stats_.lane_block(l, i), lf_grad));
    if (l == 0) return;
    DeviceBuffer<R>& sum = sums[std::size_t(l)];
    if (sum.empty())
      sum = copy(grad.get());
    else
      scaled_sum<R>(sum.get(), grad.get(), nullptr, nullptr, sum.size(), 1, true);
  };
  g.reverse(sv.loss_input(), std::move(dy), watch, add, kConsumingReverse);
  for (std::size_t l = 0; l < sums.size(); ++l) measure_.tensor(sums[l].get(), stats_.field(int(l), lf_grad));
}

template <class R>
void BatchRun<R>::keep_streams(GpuTape<R>& g, const sim::StackValues& sv, int first) {
  // This pass's (update, block probes), and a training loop's step 0's.
  for (DeviceBuffer<R>* into : {&first_streams_, train_ && train_->step == 0 ? train_->streams0 : nullptr}) {
    if (!into || into->empty()) continue;
    for (std::size_t i = 0; i < sv.stream.size(); ++i)
      copy_on_device(into->get() + (first + i) * S_ * per_, g.value(sv.stream[i]).get(),
                     S_ * per_ * sizeof(R));
  }
}

template <class R>
GpuContext<R> BatchRun<R>::side_context(DeviceStats& discarded, const GpuParameterUpdate<R>* apply) const {
  GpuContext<R> ctx = ctx_;
  ctx.record = nullptr;
  ctx.apply = apply;
  ctx.probe = nullptr;  // the sizes are the first pass's (as the CPU's updated pass has no probe)
  ctx.stats = &discarded;
  return ctx;
}

template <class R>
sim::PlacementState BatchRun<R>::replay_state() const {
  sim::PlacementState replay;
  replay.replay = true;
  replay.omega_sq_used = state_.omega_sq_used;
  return replay;
}

template <class R>
void BatchRun<R>::compare_streams(GpuTape<R>& g, const sim::StackValues& sv, int first, int last) {
  const int n = int(sv.stream.size()), K = shape_.depth;
  for (int i = 0; i < n; ++i) {
    if (i + 1 == n && last < K) break;  // x_last: the next segment's first stream
    const int l = first + i;
    const R* before = reference_stream(l);
    sample_distance_sq(g.value(sv.stream[i]).get(), before, per_, S_, stats_.field(l, lf_change));
    sample_dot(before, before, per_, S_, stats_.field(l, lf_change_ref));
  }
}

template <class R>
void BatchRun<R>::compare_logits(GpuTape<R>& g, const sim::StackValues& sv) {
  const DeviceBuffer<R>& z = g.value(sv.loss_input());
  sample_abs_distance(z.get(), train_->logits0->get(), z.size() / S_, S_,
                      stats_.field(stats_.output_block(), lf_logit_change));
}

template <class R>
void BatchRun<R>::measure_training(GpuTape<R>& g, const sim::StackValues& sv, int first, int last) {
  if (!train_) return;
  const bool fixed_later = train_->step > 0 && !train_->fresh;
  if (fixed_later) compare_streams(g, sv, first, last);
  if (last < shape_.depth) return;
  const DeviceBuffer<R>& z = g.value(sv.loss_input());
  sample_abs_distance(z.get(), static_cast<const R*>(nullptr), z.size() / S_, S_,
                      stats_.field(stats_.output_block(), lf_logit_abs));
  if (train_->step == 0) *train_->logits0 = copy(z.get(), z.size());
  if (fixed_later) compare_logits(g, sv);
}

template <class R>
void BatchRun<R>::updated_pass(int every) {
  const int K = shape_.depth;
  DeviceStats discarded(K, S_);  // the updated pass's own branch statistics are not metrics
  const GpuContext<R> ctx = side_context(
      discarded, train_ ? static_cast<const GpuParameterUpdate<R>*>(train_->optimizer) : &update_);
  sim::PlacementState replay = replay_state();
  DeviceBuffer<R> x = input(0);
  for (int first = 0; first < K; first += every) {
    const int last = std::min(K, first + every);
    GpuTape<R> g(shape_, placement_, ctx);
    const sim::StackValues sv =
        sim::build_segment(g, shape_, placement_, g.input(std::move(x)), first, last, replay);
    compare_streams(g, sv, first, last);
    if (last < K) x = copy(g.value(sv.stream.back()).get());
    if (last == K && train_) compare_logits(g, sv);
  }
}

template <class R>
void BatchRun<R>::whole() {
  {
    GpuTape<R> g(shape_, placement_, ctx_);
    const sim::StackValues sv = sim::build_stack(g, shape_, placement_, g.input(input(batch_)), &state_);
    measure_streams(g, sv, 0);
    measure_training(g, sv, 0, shape_.depth);
    if (!sv.lanes.empty()) measure_lanes(g, sv);
    measure_.finish();
    keep_streams(g, sv, 0);
    if (backward_) {
      DeviceBuffer<R> dz = loss_gradient_at(g, sv);
      if (sv.lanes.empty())
        backward(g, sv, sv.loss_input(), std::move(dz), 0, int(sv.stream.size()));
      else
        lanes_backward(g, sv, std::move(dz));
      update_.seal();
    }
  }  // the first pass's tape is freed before the updated pass and the probes
  if (update_.active() || fresh_step()) updated_pass(shape_.depth);
  if (jacobians_.any()) jacobian_passes();
}

template <class R>
void BatchRun<R>::checkpointed(int every) {
  const int K = shape_.depth, span = sim::unit_sublayers(placement_, shape_);
  every = (every + span - 1) / span * span;
  const int segments = (K + every - 1) / every;
  std::vector<DeviceBuffer<R>> checkpoint(segments);
  checkpoint[0] = input(batch_);
  DeviceBuffer<R> dout;
  // Forward: keep x_0, x_every, ...; the last segment's tape stays. state_ is carried from segment to
  // segment, as build_stack carries it.
  for (int j = 0; j < segments; ++j) {
    const int first = j * every, last = std::min(K, first + every);
    GpuTape<R> g(shape_, placement_, ctx_);
    const sim::StackValues sv = sim::build_segment(
        g, shape_, placement_,
        g.input(backward_ ? copy(checkpoint[j].get(), checkpoint[j].size()) : std::move(checkpoint[j])),
        first, last, state_);
    measure_streams(g, sv, first);
    measure_training(g, sv, first, last);
    keep_streams(g, sv, first);
    if (last < K) {
      checkpoint[j + 1] = copy(g.value(sv.stream.back()).get());
      continue;
    }
    if (!backward_) break;
    dout = backward(g, sv, sv.loss_input(), loss_gradient_at(g, sv), first, int(sv.stream.size()));
  }
  measure_.finish();
  if (backward_) reverse_segments(checkpoint, std::move(dout), every);
  if (update_.active() || fresh_step()) updated_pass(every);
}

template <class R>
void BatchRun<R>::reverse_segments(std::vector<DeviceBuffer<R>>& checkpoint, DeviceBuffer<R> dout,
                                   int every) {
  sim::PlacementState replay = replay_state();
  for (int j = int(checkpoint.size()) - 2; j >= 0; --j) {  // backward: rebuild segment j, reverse from x_last
    const int first = j * every, last = first + every;
    GpuTape<R> g(shape_, placement_, ctx_);
    const sim::StackValues sv =
        sim::build_segment(g, shape_, placement_, g.input(std::move(checkpoint[j])), first, last, replay);
    // x_last's gradient was measured by segment j + 1; here it only seeds the reverse pass.
    dout = backward(g, sv, sv.stream.back(), std::move(dout), first, int(sv.stream.size()) - 1);
  }
  update_.seal();
}

template class BatchRun<float>;
template class BatchRun<double>;

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
