#include "sim/cpu/train_loop.hpp"

#include "sim/cpu/cpu_pass.hpp"
#include "sim/cpu/optimizer.hpp"
#include "sim/cpu/update_pass.hpp"
#include "sim/metrics.hpp"
#include "sim/sample_metrics.hpp"

namespace normsim::sim {

template <class R>
std::vector<SampleRecord> train_sample_cpu(const Config& config, int sample, CpuWorkspace<R>& ws,
                                           int threads) {
  const StackShape shape(config);
  const std::shared_ptr<const Placement> owned = placement_for(config);
  const Placement& placement = *owned;
  const SampleKey key{config.seed, std::uint32_t(sample)};
  const bool fresh = config.batches == vocab::Batches::fresh;
  Optimizer<R> optimizer(shape, ws.threads, &ws.optimizer_state);
  PlacementState state;
  std::vector<MatD> stream0;  // x_0..x_K at step 0 on batch 0: what output_change compares with
  MatD z0;                    // the loss's input at step 0 on batch 0: what logit_change compares with
  const bool sizes = wants_update_sizes(config.metrics);
  std::vector<SampleRecord> records;
  bool trained = true;  // every step so far had a finite forward and backward
  for (int s = 0; s <= config.steps; ++s) {
    if (!trained) {
      records.push_back(record_from_scalars(sample, empty_scalars(config.depth), shape, MetricSet{}));
      records.back().step = s;
      continue;
    }
    state.replay = s > 0;
    // Step 0 draws W_0 as a run without steps does (no displacement yet: no apply hook).
    UpdateProbe<R> probe;  // the sizes of the update W_s - W_0 (sim/cpu/update_probe.hpp)
    const UpdateHooks<R> hooks{s < config.steps ? &optimizer : nullptr, s > 0 ? &optimizer : nullptr,
                               s > 0 && sizes ? &probe : nullptr};
    PassTensors pass = run_pass<R>(shape, placement, key, fresh ? std::uint32_t(s) : 0, hooks, state, ws);
    SampleTensors& t = pass.tensors;
    t.train_step = s;
    t.logit_mean_abs = mean_abs(pass.loss_input);
    if (s == 0) stream0 = t.stream, z0 = pass.loss_input;
    if (s > 0) t.update_sizes = probe.sizes(config.depth);
    if (s > 0 && pass.forward_ok) {  // against step 0 on batch 0 (with fresh batches, one more forward)
      MatD z = pass.loss_input;
      t.output_change = relative_change(
          fresh ? updated_stream_cpu<R>(shape, placement, key, optimizer, state, ws, &z) : t.stream, stream0);
      t.logit_change = (z - z0).cwiseAbs().mean();
    }
    records.push_back(measure_sample(sample, t, shape, config.metrics, threads));
    records.back().step = s;
    if (s == config.steps) break;
    trained = pass.backward_ok;
    if (trained) optimizer.step();
  }
  return records;
}

template std::vector<SampleRecord> train_sample_cpu<float>(const Config&, int, CpuWorkspace<float>&, int);
template std::vector<SampleRecord> train_sample_cpu<double>(const Config&, int, CpuWorkspace<double>&, int);

}  // namespace normsim::sim
