#include "sim/cpu/train_loop.hpp"

#include "sim/cpu/cpu_pass.hpp"
#include "sim/cpu/optimizer.hpp"
#include "sim/cpu/update_pass.hpp"
#include "sim/metrics.hpp"
#include "sim/sample_metrics.hpp"
#include "sim/training_loop.hpp"

namespace normsim::sim {

namespace {

// One sample as sim/training_loop.hpp's device: each step's pass (run_pass), measured as a run without steps
// measures it, with what only a training step has (the step, the logits, the update sizes, the changes
// against step 0 on batch 0).
template <class R>
class CpuTrainingDevice {
 public:
  CpuTrainingDevice(const Config& config, int sample, CpuWorkspace<R>& ws, int threads)
      : shape_(config),
        owned_(placement_for(config)),
        key_{config.seed, std::uint32_t(sample)},
        ws_(ws),
        threads_(threads),
        optimizer_(shape_, ws.threads, &ws.optimizer_state) {}
  int samples() const { return 1; }
  const StackShape& shape() const { return shape_; }
  void run_step(int s);
  SampleRecord record(int, int) const {
    return measure_sample(int(key_.sample), pass_.tensors, shape_, shape_.cfg.metrics, threads_);
  }
  bool trained(int) const { return pass_.backward_ok; }
  void step() { optimizer_.step(); }

 private:
  const StackShape shape_;
  const std::shared_ptr<const Placement> owned_;
  const SampleKey key_;
  CpuWorkspace<R>& ws_;
  const int threads_;
  Optimizer<R> optimizer_;
  PlacementState state_;
  std::vector<MatD> stream0_;  // x_0..x_K at step 0 on batch 0: what output_change compares with
  MatD z0_;                    // the loss's input at step 0 on batch 0: what logit_change compares with
  PassTensors pass_;           // the last step's
};

template <class R>
void CpuTrainingDevice<R>::run_step(int s) {
  const Config& config = shape_.cfg;
  const bool fresh = config.batches == vocab::Batches::fresh;
  pass_ = PassTensors();  // the last step's tensors freed before this step's are made
  state_.replay = s > 0;
  // Step 0 draws W_0 as a run without steps does (no displacement yet: no apply hook).
  CpuUpdateProbe<R> probe;  // the sizes of the update W_s - W_0 (sim/update_probe.hpp)
  const UpdateHooks<R> hooks{s < config.steps ? &optimizer_ : nullptr, s > 0 ? &optimizer_ : nullptr,
                             s > 0 && wants_update_sizes(config.metrics) ? &probe : nullptr};
  pass_ = run_pass<R>(shape_, *owned_, key_, fresh ? std::uint32_t(s) : 0, hooks, state_, ws_);
  SampleTensors& t = pass_.tensors;
  t.train_step = s;
  t.logit_mean_abs = mean_abs(pass_.loss_input);
  if (s == 0) stream0_ = t.stream, z0_ = pass_.loss_input;
  if (s > 0) {
    probe.finish();
    t.update_sizes = probe.sizes(0, config.depth);
  }
  if (s > 0 && pass_.forward_ok) {  // against step 0 on batch 0 (with fresh batches, one more forward)
    MatD z = pass_.loss_input;
    t.output_change = relative_change(
        fresh ? updated_stream_cpu<R>(shape_, *owned_, key_, optimizer_, state_, ws_, &z) : t.stream,
        stream0_);
    t.logit_change = (z - z0_).cwiseAbs().mean();
  }
}

}  // namespace

template <class R>
std::vector<SampleRecord> train_sample_cpu(const Config& config, int sample, CpuWorkspace<R>& ws,
                                           int threads) {
  CpuTrainingDevice<R> device(config, sample, ws, threads);
  const int samples[] = {sample};
  return std::move(run_training(device, config.steps, device.shape(), samples)[0]);
}

template std::vector<SampleRecord> train_sample_cpu<float>(const Config&, int, CpuWorkspace<float>&, int);
template std::vector<SampleRecord> train_sample_cpu<double>(const Config&, int, CpuWorkspace<double>&, int);

}  // namespace normsim::sim
