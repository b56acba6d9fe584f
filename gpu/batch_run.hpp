// One batch of S samples on the device, start to end: weights, forward, the statistics of every stream and
// of the output, backward with the statistics of every stream gradient. Every metric lands in DeviceStats;
// nothing comes to the host (but Admin's omega, which the placement reads between sublayers). Either the
// whole tape is kept (whole()), or the activations are checkpointed every n sublayers (checkpointed(n)):
// a first forward pass keeps only the streams x_0, x_n, x_2n, ...; the backward rebuilds each segment's tape
// from its first stream (Admin's omega replayed, as the backward treats it as a constant) and runs the
// segment's reverse pass, last segment first. Without a backward pass (the plan's forward_only), the forward
// runs checkpointed(1) and keeps no checkpoint: one unit's tape at a time. With a parameter update (key
// `update`), the first pass keeps its streams and records the loss gradients sgd/adam need; then an updated
// pass runs forward with every W + dW (gpu/gpu_weight_update.hpp), in the same segments, Admin's omega
// replayed as on the CPU, and measures output_change against the kept streams. The Jacobian metrics (whole
// tape only) run their probes' reverse passes on rebuilt tapes (gpu/batch_jacobians.cpp). A step of the
// training loop (TrainStep, gpu/batch_training.hpp) draws W_s through the optimizer and records the step's
// gradients into it, on the step's batch, and measures the step's change against step 0 on batch 0.
#pragma once
#include <span>
#include <vector>

#include "gpu/blas.hpp"
#include "gpu/device_stats.hpp"
#include "gpu/gpu_optimizer.hpp"
#include "gpu/gpu_tape_device.hpp"
#include "gpu/gpu_update_probe.hpp"
#include "gpu/gpu_weight_update.hpp"
#include "gpu/stream_statistics.hpp"
#include "sim/jacobian_probes.hpp"
#include "sim/sample_metrics.hpp"
#include "sim/stack_build.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// Step `step` of `steps` of the training loop (sim/cpu/train_loop.hpp is the specification): the pass draws
// W_s through the optimizer and, while step < steps, records the step's gradients into it; it runs on batch
// `step` when fresh, else batch 0. Step 0 keeps its streams x_0..x_K and the loss's input z (y, or the
// logits) on batch 0 in the buffers below, which later steps compare with: output_change and logit_change
// (with fresh batches, from one more forward on batch 0).
template <class R>
struct TrainStep {
  GpuOptimizer<R>* optimizer = nullptr;
  int step = 0, steps = 0;
  bool fresh = false;
  DeviceBuffer<R>* streams0 = nullptr;  // (K + 1) x S x T x d, allocated by the caller
  DeviceBuffer<R>* logits0 = nullptr;   // S x T x the loss's width, written at step 0
  GpuUpdateProbe<R>* probe = nullptr;   // the step's update sizes (step >= 1, when dwx_ or rel_dw_ is asked)
};

template <class R>
class BatchRun {
 public:
  BatchRun(const sim::Config& config, const sim::StackShape& shape, const sim::Placement& placement,
           const Blas& blas, std::span<const int> samples, bool recompute, DeviceStats& stats,
           const TrainStep<R>* train = nullptr);
  void whole();
  void checkpointed(int every);  // every: rounded up to a multiple of the placement's span
  // Sample s's Jacobian estimates into r (after whole(); NaN where not asked for).
  void add_jacobians(int s, sim::SampleScalars& r) const;

 private:
  // The raw x_0 of every sample on batch `batch`, or the embedding's input u (sim/edges.hpp).
  DeviceBuffer<R> input(std::uint32_t batch) const;
  DeviceBuffer<R> copy(const R* d_x, std::size_t n = 0) const;  // n entries (0: a stream's S x T x d)
  // dLoss/dz at what the loss reads (y, or the logits) of every sample.
  DeviceBuffer<R> loss_gradient_at(GpuTape<R>& g, const sim::StackValues& sv) const;
  // Statistics of the streams a segment starting at x_first holds (each pair with the next stream; x_K and
  // the output when the segment ends the stack).
  void measure_streams(GpuTape<R>& g, const sim::StackValues& sv, int first);
  // Reverse pass of graph g from `from` with gradient dout; measures the gradient of sv.stream[i] as
  // x_{first+i} for i < watched and returns a copy of the gradient of sv.stream[0].
  DeviceBuffer<R> backward(GpuTape<R>& g, const sim::StackValues& sv, sim::Value from, DeviceBuffer<R> dout,
                           int first, int watched);
  // A whole tape of n > 1 lanes: every lane's stream statistics (each with its next) and each pair of
  // lanes' cosine per layer.
  void measure_lanes(GpuTape<R>& g, const sim::StackValues& sv);
  // The reverse pass of a whole tape of n > 1 lanes from the output: measures every lane's gradient and,
  // per layer, the sum of its lanes' gradients, as the CPU's grad of a layer of lanes.
  void lanes_backward(GpuTape<R>& g, const sim::StackValues& sv, DeviceBuffer<R> dy);
  // The checkpointed backward from x_last of the second-to-last segment (dout: its gradient), each earlier
  // segment rebuilt from its checkpoint.
  void reverse_segments(std::vector<DeviceBuffer<R>>& checkpoint, DeviceBuffer<R> dout, int every);
  // The first pass's streams of a segment starting at x_first, kept for the updated pass.
  void keep_streams(GpuTape<R>& g, const sim::StackValues& sv, int first);
  // The updated pass in segments of `every` sublayers, on batch 0: output_change's sums of every stream
  // (and, in a training step, logit_change's).
  void updated_pass(int every);
  // output_change's sums of the streams a segment [first, last) holds against the kept ones (x_last left
  // to the next segment unless last is K).
  void compare_streams(GpuTape<R>& g, const sim::StackValues& sv, int first, int last);
  // A training step's measures of a segment of its first pass: the logits' sizes where it ends the stack,
  // and with fixed batches at step s > 0 the change of its streams and logits since step 0.
  void measure_training(GpuTape<R>& g, const sim::StackValues& sv, int first, int last);
  // logit_change's sum of |z - z_0| of the loss's input z at the end of the stack.
  void compare_logits(GpuTape<R>& g, const sim::StackValues& sv);
  // Whether this pass is a training step's at s > 0 with fresh batches: its change since step 0 is measured
  // on batch 0 by the updated pass.
  bool fresh_step() const { return train_ && train_->fresh && train_->step > 0; }
  // A context for passes that are not the first (updated, probes): no gradients recorded, W + dW drawn
  // when `apply`, branch statistics into `discarded`.
  GpuContext<R> side_context(DeviceStats& discarded, const GpuParameterUpdate<R>* apply) const;
  sim::PlacementState replay_state() const;  // the first pass's, replayed (Admin's omega held)
  // x_l of this first pass (kept for the update or the block probes).
  const R* first_stream(int l) const { return first_streams_.get() + std::size_t(l) * S_ * per_; }
  // x_l that output_change compares with: this first pass's, or in a training step step 0's on batch 0.
  const R* reference_stream(int l) const {
    return train_ ? train_->streams0->get() + std::size_t(l) * S_ * per_ : first_stream(l);
  }
  // The Jacobian probes (sim/jacobian_probes.hpp) on the device (gpu/batch_jacobians.cpp): each reverse
  // pass runs on a tape rebuilt for it (the device tape frees as it goes); the per-probe sums come to the
  // host at the end.
  void jacobian_passes();
  class JacobianDevice;

  const sim::Config& config_;
  const sim::StackShape& shape_;
  const sim::Placement& placement_;
  const TrainStep<R>* train_;
  std::uint32_t batch_;  // the first pass's batch: a training step's with fresh batches, else 0
  int S_;
  std::size_t per_;  // T x d
  DeviceBuffer<std::uint32_t> ids_;
  DeviceBuffer<R> scratch_;
  GpuContext<R> ctx_;
  DeviceStats& stats_;
  StreamStatistics<R> measure_;
  // The config asks for a backward metric, or the update steps on the loss (else no backward pass runs, as
  // on the CPU).
  bool backward_;
  GpuWeightUpdate<R> update_;
  DeviceBuffer<R> first_streams_;  // with an update: x_0..x_K of the first pass, (K + 1) x S x T x d
  sim::PlacementState state_;      // the first pass's (Admin's omega, replayed by the updated pass)
  sim::JacobianWanted jacobians_;
  int probes_;
  sim::JacobianSums jacobian_sums_;
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
