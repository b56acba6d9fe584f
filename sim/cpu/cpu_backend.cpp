#include "sim/cpu/cpu_backend.hpp"

#include <malloc.h>
#include <omp.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <iterator>
#include <mutex>
#include <string>
#include <vector>

#include "sim/bf16.hpp"
#include "sim/cpu/cpu_pass.hpp"
#include "sim/cpu/train_loop.hpp"
#include "sim/cpu/update_pass.hpp"
#include "sim/cpu/weight_update.hpp"
#include "sim/sample_metrics.hpp"
#include "sim/stack_build.hpp"
#include "sim/unit_plan.hpp"
#include "vocab/names.hpp"

namespace normsim::sim {

namespace {

// The tape's matrices (T x d, T x H) are above glibc's default mmap threshold: each would be a fresh
// mapping, unmapped when freed, so every sublayer of every sample paid page faults for its first touches
// (a fifth of W1's time). Served from the heap and kept there (no trimming), they reuse the pages the last
// sample freed. Process-wide, set once; a program that embeds the backend keeps the heap it grew.
void keep_freed_memory() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's maximum for the threshold on 64-bit
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  });
}

// `outer` workspaces, each for a sample on `inner` threads, keeping weights in up to `slots` matrices (none:
// 0) and an optimizer's state where the run takes `steps`; what an earlier run kept beyond that is freed.
template <class R>
void prepare_workspaces(std::vector<CpuWorkspace<R>>& ws, int outer, int inner, std::size_t slots,
                        bool steps) {
  ws.resize(std::size_t(outer));
  for (CpuWorkspace<R>& w : ws) {
    w.threads = inner;
    w.keep_weights = slots > 0;
    if (!steps) w.optimizer_state.release();
    if (w.kept.size() > slots) {
      w.kept.resize(slots);
      w.kept_pass.resize(slots);
    }
  }
}

}  // namespace

// "/proc/cpuinfo's model name, N threads" (Linux; "unknown CPU" elsewhere).
std::string CpuBackend::device() const {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model = "unknown CPU";
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      model = line.substr(line.find_first_not_of(" \t", line.find(':') + 1));
      break;
    }
  return model + ", " + std::to_string(threads_) + (threads_ == 1 ? " thread" : " threads");
}

CpuBackend::CpuBackend(int threads) : threads_(resolved_threads(threads)) {
  keep_freed_memory();
}

std::string CpuBackend::refusal(const Config& config, int unit_samples) const {
  if (config.precision == vocab::Precision::tf32)
    return "key 'precision': '" + std::string(vocab::name(config.precision)) +
           "' is a CUDA tensor-core mode; the CPU backend runs float32 and float64 (use --backend cuda" +
           std::string(reference_backend_registered() ? " or --backend reference" : "") +
           ", or precision = \"float32\")";
  if (std::string why = bf16_refusal(config); !why.empty()) return why;
  const int at_once = std::min({threads_, config.samples, unit_samples > 0 ? unit_samples : config.samples});
  return cpu_memory_refusal(config, at_once, machine_memory_bytes());
}

template <class R>
SampleTensors simulate_sample_cpu(const Config& config, int sample, CpuWorkspace<R>& ws) {
  const StackShape shape(config);
  const std::shared_ptr<const Placement> owned = placement_for(config);
  const Placement& placement = *owned;
  const SampleKey key{config.seed, std::uint32_t(sample)};

  // With update != none the backward also records the weight gradients the update needs (sgd, adam).
  WeightUpdate<R> update(config, key.seed, key.sample);
  PlacementState state;
  // The first pass's tape is freed before the second pass.
  PassTensors first = run_pass<R>(shape, placement, key, 0, UpdateHooks<R>{&update, nullptr}, state, ws);
  SampleTensors out = std::move(first.tensors);
  // A step from a non-finite gradient is not an update: output_change stays unmeasured.
  if (config.update != vocab::Update::none && (first.backward_ok || !update.needs_gradients()) &&
      !out.stream.empty() && out.output_finite)
    out.output_change =
        relative_change(updated_stream_cpu<R>(shape, placement, key, update, state, ws), out.stream);
  return out;
}

template <class R>
SampleTensors simulate_sample_cpu(const Config& config, int sample) {
  CpuWorkspace<R> ws;
  return simulate_sample_cpu<R>(config, sample, ws);
}

template SampleTensors simulate_sample_cpu<float>(const Config&, int);
template SampleTensors simulate_sample_cpu<double>(const Config&, int);

std::vector<SampleRecord> CpuBackend::run(const Config& config, std::span<const int> samples) {
  std::vector<std::vector<SampleRecord>> records(samples.size());  // per sample, its steps
  std::exception_ptr error;
  std::mutex error_mutex;
  if (const std::string why = refusal(config, int(samples.size())); !why.empty())
    throw BackendUnavailable(why);
  const bool f64 = config.precision == vocab::Precision::float64;
  const StackShape shape(config);
  // Samples run side by side, and the threads left over work inside them (samples 1 uses every thread);
  // a sample's numbers do not depend on how many threads it gets (sim/cpu/cpu_parallel.hpp).
  const int outer = std::max(1, std::min(threads_, int(samples.size()))),
            inner = (threads_ + outer - 1) / outer;
  const bool keep = cpu_keeps_weights(config, outer, machine_memory_bytes());
  const std::size_t slots = keep ? std::size_t(config.depth) * kWeightKinds : 0;
  prepare_workspaces(ws32_, outer, inner, f64 ? 0 : slots, !f64 && config.steps > 0);
  prepare_workspaces(ws64_, outer, inner, f64 ? slots : 0, f64 && config.steps > 0);
  const auto run_sample = [&](std::size_t i, int me) {
    try {
      if (config.steps > 0) {
        records[i] = f64 ? train_sample_cpu<double>(config, samples[i], ws64_[me], inner)
                         : train_sample_cpu<float>(config, samples[i], ws32_[me], inner);
        return;
      }
      const SampleTensors t = f64 ? simulate_sample_cpu<double>(config, samples[i], ws64_[me])
                                  : simulate_sample_cpu<float>(config, samples[i], ws32_[me]);
      records[i] = {measure_sample(samples[i], t, shape, config.metrics, inner)};
    } catch (...) {
      const std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  // One sample at a time runs outside any parallel region: its own parallel regions are then the outermost
  // and reuse OpenMP's thread pool, where nested ones would start fresh threads every time (thousands per
  // W1 sample: a third of samples 1's time on 2 threads).
  if (outer == 1) {
    for (std::size_t i = 0; i < samples.size(); ++i) run_sample(i, 0);
  } else if (inner == 1) {
#pragma omp parallel for schedule(dynamic, 1) num_threads(outer)
    for (std::size_t i = 0; i < samples.size(); ++i) run_sample(i, omp_get_thread_num());
  } else {
    // Fewer samples than threads: thread i < outer runs sample i; the others have none and wait at the
    // region's end, where they run the tasks the samples' work is split into (run_pieces, thread_split.hpp),
    // so the samples share one team instead of each starting nested threads. A team smaller than asked
    // (OMP_THREAD_LIMIT, OMP_DYNAMIC, a caller's own region) runs every sample all the same.
#pragma omp parallel num_threads(threads_)
    for (int i = omp_get_thread_num(); i < outer; i += omp_get_num_threads()) run_sample(std::size_t(i), i);
  }
  if (error) std::rethrow_exception(error);
  std::vector<SampleRecord> all;
  for (auto& steps : records) std::move(steps.begin(), steps.end(), std::back_inserter(all));
  return all;
}

}  // namespace normsim::sim
