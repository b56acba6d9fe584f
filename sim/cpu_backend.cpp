#include "sim/cpu_backend.hpp"

#include <omp.h>

#include <algorithm>
#include <exception>
#include <mutex>

#include "sim/cpu_graph.hpp"
#include "sim/inputs.hpp"
#include "sim/jacobian_probes.hpp"
#include "sim/sample_metrics.hpp"
#include "sim/stack_build.hpp"
#include "sim/unit_plan.hpp"
#include "sim/update_pass.hpp"
#include "sim/weight_update.hpp"

namespace normsim::sim {

CpuBackend::CpuBackend(int threads) : threads_(threads > 0 ? threads : omp_get_num_procs()) {}

std::string CpuBackend::refusal(const Config& config, int unit_samples) const {
  if (config.precision != "float32" && config.precision != "float64")
    return "key 'precision': '" + config.precision +
           "' is a CUDA tensor-core mode; the CPU backend runs float32 and float64 (use --backend cuda, or "
           "precision = \"float32\")";
  const int at_once = std::min({threads_, config.samples, unit_samples > 0 ? unit_samples : config.samples});
  if (const std::string why = cpu_memory_refusal(config, at_once, machine_memory_bytes()); !why.empty())
    return "keys 'width', 'depth', 'mlp_ratio', 'tokens': " + why;
  return "";
}

template <class R>
SampleTensors simulate_sample_cpu(const Config& config, int sample) {
  const StackShape shape(config);
  const std::shared_ptr<const Placement> owned = placement_for(config);
  const Placement& placement = *owned;
  const SampleKey key{config.seed, std::uint32_t(sample)};
  const int T = shape.tokens, d = shape.width;

  // With update != none the backward also records the weight gradients the update needs (sgd, adam).
  WeightUpdate<R> update(config, key.seed, key.sample);
  PlacementState state;
  SampleTensors out;
  bool backward_ok = false;
  {
    CpuGraph<R> graph(shape, placement, key, UpdateHooks<R>{&update, nullptr});
    const StackValues sv =
        build_stack(graph, shape, placement, graph.input(input_matrix<R>(config, key)), &state);
    for (const Value v : sv.stream) out.stream.push_back(graph.value(v).template cast<double>());
    const Mat<R>& y = graph.value(sv.output);
    out.output_finite = y.allFinite();
    out.branch_sq = graph.branch_sq;
    bool forward_ok = out.output_finite;
    for (const MatD& s : out.stream) forward_ok = forward_ok && s.allFinite();
    // The backward runs when a backward metric is asked for, or when the update is a step on the loss.
    if (forward_ok && (config.metrics.any_of(MetricPass::backward) || update.needs_gradients())) {
      Mat<R> dy(T, d);
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < d; ++i)
          dy(t, i) = config.loss == vocab::Loss::mse
                         ? R(double(y(t, i)) - target_entry(config.seed, key.sample, t, i, d))
                         : R(readout_entry(config.seed, key.sample, t, i, d));
      graph.backward(sv.output, dy);
      backward_ok = true;
      for (const Value v : sv.stream) {
        out.grad.push_back(graph.grad(v).template cast<double>());
        backward_ok = backward_ok && out.grad.back().allFinite();
      }
      out.gradw = graph.gradw;  // before the Jacobian probes' reverse passes, which are not the loss's
      update.seal();
      JacobianEstimates j = estimate_jacobians(graph, sv.stream, key, config.jacobian_probes,
                                               JacobianWanted::of(config.metrics));
      out.jac_sq = std::move(j.jac_sq);
      out.jac_spread = std::move(j.jac_spread);
      out.block_identity_dev = std::move(j.block_identity_dev);
    } else {
      out.gradw = graph.gradw;
    }
  }  // the first pass's tape is freed before the second pass
  // A step from a non-finite gradient is not an update: output_change stays unmeasured.
  if (config.update != vocab::Update::none && (backward_ok || !update.needs_gradients()) &&
      !out.stream.empty() && out.output_finite)
    out.output_change =
        relative_change(updated_stream_cpu<R>(shape, placement, key, update, state), out.stream);
  return out;
}

template SampleTensors simulate_sample_cpu<float>(const Config&, int);
template SampleTensors simulate_sample_cpu<double>(const Config&, int);

std::vector<SampleRecord> CpuBackend::run(const Config& config, std::span<const int> samples) {
  std::vector<SampleRecord> records(samples.size());
  std::exception_ptr error;
  std::mutex error_mutex;
  if (const std::string why = refusal(config, int(samples.size())); !why.empty())
    throw BackendUnavailable(why);
  const bool f64 = config.precision == "float64";
  const StackShape shape(config);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads_)
  for (std::size_t i = 0; i < samples.size(); ++i) {
    try {
      const SampleTensors t = f64 ? simulate_sample_cpu<double>(config, samples[i])
                                  : simulate_sample_cpu<float>(config, samples[i]);
      records[i] = measure_sample(samples[i], t, shape, config.metrics);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return records;
}

}  // namespace normsim::sim
