#include "gpu/batch_training.hpp"

#include <cmath>
#include <optional>

#include "gpu/batch_run.hpp"
#include "gpu/device_stats.hpp"
#include "gpu/gpu_update_probe.hpp"
#include "sim/metrics.hpp"
#include "sim/sample_metrics.hpp"
#include "sim/training_loop.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {

// Whether a step's pass trained the sample (the CPU's backward_ok): every stream, the output, the loss's
// input and every stream gradient finite.
bool pass_finite(const sim::SampleScalars& r, int K) {
  bool ok = r.output_finite && std::isfinite(r.values[sim::metric::logit_mean_abs][K]);
  for (std::size_t l = 0; l < r.stream_finite.size(); ++l) ok = ok && r.stream_finite[l] && r.grad_finite[l];
  return ok;
}

// A batch as sim/training_loop.hpp's device: each step one BatchRun that draws W_s through the optimizer
// (gpu/gpu_optimizer.hpp) and measures every asked metric on the device, its scalars brought back with one
// synchronization.
template <class R>
class GpuTrainingDevice {
 public:
  GpuTrainingDevice(const sim::Config& config, const sim::StackShape& shape, const sim::Placement& placement,
                    const Blas& blas, std::span<const int> samples, const MemoryPlan& plan)
      : config_(config),
        shape_(shape),
        placement_(placement),
        blas_(blas),
        samples_(samples),
        plan_(plan),
        optimizer_(shape, blas.handle(), int(samples.size())),
        streams0_(std::size_t(shape.depth + 1) * samples.size() * shape.tokens * shape.width),
        train_{&optimizer_, 0, config.steps, config.batches == vocab::Batches::fresh, &streams0_, &logits0_},
        finite_(samples.size()) {}
  // train_ points into this object's members.
  GpuTrainingDevice(const GpuTrainingDevice&) = delete;
  GpuTrainingDevice& operator=(const GpuTrainingDevice&) = delete;
  int samples() const { return int(samples_.size()); }
  void run_step(int s);
  sim::SampleRecord record(int i, int s);
  bool trained(int i) const { return finite_[std::size_t(i)]; }
  void step() { optimizer_.step(); }

 private:
  const sim::Config& config_;
  const sim::StackShape& shape_;
  const sim::Placement& placement_;
  const Blas& blas_;
  std::span<const int> samples_;
  const MemoryPlan& plan_;
  GpuOptimizer<R> optimizer_;
  DeviceBuffer<R> streams0_, logits0_;  // x_0..x_K and the loss's input at step 0 on batch 0
  TrainStep<R> train_;
  // The step's statistics, update sizes and run, in the order they are made (the run reads the other two).
  std::optional<DeviceStats> stats_;
  std::optional<GpuUpdateProbe<R>> probe_;
  std::optional<BatchRun<R>> run_;
  std::vector<bool> finite_;  // each sample's pass of the step, after record()
};

template <class R>
void GpuTrainingDevice<R>::run_step(int s) {
  run_.reset(), probe_.reset(), stats_.reset();  // the last step's, in reverse order of their making
  train_.step = s;
  stats_.emplace(shape_.depth, samples(), placement_.lanes());
  if (sim::wants_update_sizes(config_.metrics) && s > 0)
    probe_.emplace(blas_.handle(), samples(), shape_.tokens);
  train_.probe = probe_ ? &*probe_ : nullptr;
  run_.emplace(config_, shape_, placement_, blas_, samples_, plan_.recompute, *stats_, &train_);
  if (plan_.checkpoint_every > 0)
    run_->checkpointed(plan_.checkpoint_every);
  else
    run_->whole();
  stats_->copy_to_host();  // the step's synchronization (and one copy per matrix probed)
  if (probe_) probe_->finish();
}

template <class R>
sim::SampleRecord GpuTrainingDevice<R>::record(int i, int s) {
  sim::SampleScalars r = stats_->scalars(i, shape_);
  r.train_step = s;
  run_->add_jacobians(i, r);
  if (probe_) sim::put_update_sizes(r, probe_->sizes(i, shape_.depth));
  const bool logits_finite = std::isfinite(r.values[sim::metric::logit_mean_abs][shape_.depth]);
  r.updated = s > 0 && logits_finite;  // output_change against step 0, from a finite forward
  finite_[std::size_t(i)] = pass_finite(r, shape_.depth);
  return sim::record_from_scalars(samples_[std::size_t(i)], r, shape_, shape_.cfg.metrics);
}

}  // namespace

template <class R>
std::vector<std::vector<sim::SampleRecord>> train_batch(const sim::Config& config,
                                                        const sim::StackShape& shape,
                                                        const sim::Placement& placement, const Blas& blas,
                                                        std::span<const int> samples,
                                                        const MemoryPlan& plan) {
  GpuTrainingDevice<R> device(config, shape, placement, blas, samples, plan);
  return sim::run_training(device, config.steps, shape, samples);
}

template std::vector<std::vector<sim::SampleRecord>> train_batch<float>(const sim::Config&,
                                                                        const sim::StackShape&,
                                                                        const sim::Placement&, const Blas&,
                                                                        std::span<const int>,
                                                                        const MemoryPlan&);
template std::vector<std::vector<sim::SampleRecord>> train_batch<double>(const sim::Config&,
                                                                         const sim::StackShape&,
                                                                         const sim::Placement&, const Blas&,
                                                                         std::span<const int>,
                                                                         const MemoryPlan&);

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
