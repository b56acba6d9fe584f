#include "gpu/batch_training.hpp"

#include <cmath>
#include <optional>

#include "gpu/batch_run.hpp"
#include "gpu/device_stats.hpp"
#include "gpu/gpu_update_probe.hpp"
#include "sim/metrics.hpp"
#include "sim/sample_metrics.hpp"

namespace normsim::gpu::inline NORMSIM_GPU_ABI {

namespace {

// Whether a step's pass trained the sample (sim::train_sample_cpu's backward_ok): every stream, the output,
// the loss's input and every stream gradient finite.
bool pass_finite(const sim::SampleScalars& r, int K) {
  bool ok = r.output_finite && std::isfinite(r.values[sim::metric::logit_mean_abs][K]);
  for (std::size_t l = 0; l < r.stream_finite.size(); ++l) ok = ok && r.stream_finite[l] && r.grad_finite[l];
  return ok;
}

// Sample i's record of step s (run: the step's pass; probe: its update sizes, or null); `trained`: whether
// every earlier step trained it (updated here).
template <class R>
sim::SampleRecord step_record(const DeviceStats& stats, const BatchRun<R>& run,
                              const GpuUpdateProbe<R>* probe, int i, int sample, int s,
                              const sim::StackShape& shape, bool& trained) {
  sim::SampleRecord rec;
  if (!trained) {
    rec = sim::record_from_scalars(sample, sim::empty_scalars(shape.depth), shape, sim::MetricSet{});
  } else {
    sim::SampleScalars r = stats.scalars(i, shape);
    r.train_step = s;
    run.add_jacobians(i, r);
    if (probe) sim::put_update_sizes(r, probe->sizes(i, shape.depth));
    const bool logits_finite = std::isfinite(r.values[sim::metric::logit_mean_abs][shape.depth]);
    r.updated = s > 0 && logits_finite;  // output_change against step 0, from a finite forward
    rec = sim::record_from_scalars(sample, r, shape, shape.cfg.metrics);
    trained = pass_finite(r, shape.depth);
  }
  rec.step = s;
  return rec;
}

}  // namespace

template <class R>
std::vector<std::vector<sim::SampleRecord>> train_batch(const sim::Config& config,
                                                        const sim::StackShape& shape,
                                                        const sim::Placement& placement, const Blas& blas,
                                                        std::span<const int> samples,
                                                        const MemoryPlan& plan) {
  const int S = int(samples.size()), K = shape.depth;
  GpuOptimizer<R> optimizer(shape, blas.handle(), S);
  DeviceBuffer<R> streams0(std::size_t(K + 1) * S * shape.tokens * shape.width), logits0;
  TrainStep<R> step{&optimizer, 0,       config.steps, config.batches == vocab::Batches::fresh,
                    &streams0,  &logits0};
  const bool sizes = sim::wants_update_sizes(config.metrics);
  std::vector<std::vector<sim::SampleRecord>> records(S);
  std::vector<bool> trained(S, true);
  for (; step.step <= config.steps; ++step.step) {
    DeviceStats stats(K, S, placement.lanes());
    std::optional<GpuUpdateProbe<R>> probe;
    if (sizes && step.step > 0) probe.emplace(blas.handle(), S, shape.tokens);
    step.probe = probe ? &*probe : nullptr;
    BatchRun<R> run(config, shape, placement, blas, samples, plan.recompute, stats, &step);
    if (plan.checkpoint_every > 0)
      run.checkpointed(plan.checkpoint_every);
    else
      run.whole();
    stats.copy_to_host();  // the step's synchronization (and one copy per matrix probed)
    if (probe) probe->copy_to_host();
    for (int i = 0; i < S; ++i) {
      bool t = trained[i];
      records[i].push_back(step_record<R>(stats, run, step.probe, i, samples[i], step.step, shape, t));
      trained[i] = t;
    }
    if (step.step < config.steps) optimizer.step();
  }
  return records;
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

}  // namespace normsim::gpu::inline NORMSIM_GPU_ABI
