#include "gpu/cuda_backend.hpp"
#include "vocab/names.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "gpu/batch_run.hpp"
#include "gpu/batch_training.hpp"
#include "gpu/blas.hpp"
#include "gpu/cuda_check.hpp"
#include "gpu/device_handles.hpp"
#include "gpu/device_stats.hpp"
#include "gpu/gpu_tape_device.hpp"
#include "gpu/memory_plan.hpp"
#include "gpu/ops.hpp"
#include "gpu/stream_statistics.hpp"
#include "sim/bf16.hpp"
#include "sim/jacobian_wanted.hpp"
#include "sim/sample_metrics.hpp"
#include "sim/stack_build.hpp"
#include "sim/unit_plan.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

namespace {
// The Jacobian probes rebuild the whole tape for each reverse pass (gpu/batch_jacobians.cpp): not
// implemented for a plan that checkpoints the activations.
bool asks_jacobian(const sim::Config& c) {
  return sim::JacobianWanted::of(c.metrics).any();
}
// bf16 where the CPU's emulation refuses it (sim::bf16_refusal), and SwiGLU, whose fused kernels round once
// where PyTorch's separate ops (and the CPU) round silu(g) and its product apart.
std::string bf16_cuda_refusal(const sim::Config& c) {
  if (std::string why = sim::bf16_refusal(c); !why.empty()) return why;
  if (c.precision == vocab::Precision::bf16 && c.activation == vocab::Activation::swiglu)
    return "key 'activation': 'swiglu' in precision 'bf16' runs on the CPU backend only (the CUDA backend's "
           "fused SwiGLU kernels do not round silu(g) apart; docs/gpu.md): use --backend cpu";
  return "";
}

std::string jacobian_refusal() {
  return "key 'metrics': the Jacobian metrics (jac_sq, jac_spread, block_identity_dev) run on the CUDA "
         "backend only when the whole tape of a sample fits the GPU, and this one needs activation "
         "checkpointing (--backend cpu, a smaller width, depth or tokens, or leave them out of metrics)";
}

// A block that reads emb (x_0) or calls Fv (V_1) needs that value on the tape of every unit it runs: the
// device rebuilds a segment (checkpoints) or a block's unit (block_identity_dev's probes) on a tape of its
// own, which lacks it.
std::string embedding_refusal(const sim::Config& c, int checkpoint_every) {
  const auto owned = sim::placement_for(c);  // kept: a reference into the temporary would dangle
  const sim::Placement& p = *owned;
  if (!p.reads_embedding() && !p.reads_first_values()) return "";
  const std::string what = p.reads_embedding() ? "reads emb" : "calls Fv";
  const std::string value = p.reads_embedding() ? "the x_0 a block with emb" : "the V_1 a block with Fv";
  if (checkpoint_every > 0)
    return "key 'block': a block that " + what +
           " runs on the CUDA backend only when the whole tape of a sample fits the GPU, and this one needs "
           "activation checkpointing (--backend cpu, or a smaller width, depth or tokens)";
  if (sim::JacobianWanted::of(c.metrics).blocks)
    return "key 'metrics': block_identity_dev rebuilds each block on a tape of its own, which lacks " +
           value + " reads (--backend cpu, or leave it out of metrics)";
  return "";
}

// A block of lanes is built whole (sim/stack_build.hpp): a segment boundary would carry n values.
std::string lanes_refusal(const sim::Config& c, int checkpoint_every) {
  if (sim::placement_for(c)->lanes() == 1 || checkpoint_every == 0) return "";
  return "key 'block': a block of lanes runs on the CUDA backend only when the whole tape of a sample fits "
         "the GPU, and this one needs activation checkpointing (--backend cpu, or a smaller width, depth or "
         "tokens)";
}

}  // namespace

CudaOptions CudaBackend::options_from_environment() {
  CudaOptions o;
  if (const char* r = std::getenv("NORMSIM_CUDA_RECOMPUTE"); r && *r) {
    o.recompute = vocab::find<vocab::Recompute>(r);
    if (!o.recompute)
      throw std::invalid_argument(std::string("NORMSIM_CUDA_RECOMPUTE: auto, true or false, not '") + r +
                                  "'");
  }
  return o;
}

CudaBackend::CudaBackend(int threads, CudaOptions options)
    : threads_(sim::resolved_threads(threads)), options_(std::move(options)) {
  std::string why;
  if (!cuda_device_usable(&why)) throw sim::BackendUnavailable(why);
  keep_pool_memory();
}

std::string CudaBackend::device() const {
#ifdef NORMSIM_CUDA_MOCK
  return "the reference device: the CUDA backend's code on the host, every kernel its plain-loop reference "
         "(gpu/ops.hpp, gpu/stat_ops.hpp), cuBLAS a plain-loop GEMM and cuSOLVER Eigen's eigensolver "
         "(gpu/mock/)";
#else
  return cuda_device_description();
#endif
}

// Whose memory refusal() weighs a sample against: the GPU's, or on the reference device the budget it
// emulates (the mock's 8 GiB device), which "this GPU" would misname.
namespace {
std::string memory_holder() {
#ifdef NORMSIM_CUDA_MOCK
  return "the reference device (emulating a GPU's memory)";
#else
  return "this GPU";
#endif
}
}  // namespace

// What refusal() names is refused here too, as the CPU backend does: a caller that runs without asking first
// (check's measurements, Python) gets BackendUnavailable, never records without the refused part (steps ran
// as step 0 alone and gave the coordinate-check claims NaN statistics on an H200, 2026-11-28).
std::vector<sim::SampleRecord> CudaBackend::run(const sim::Config& config, std::span<const int> samples) {
  if (const std::string why = refusal(config, int(samples.size())); !why.empty())
    throw sim::BackendUnavailable(why);
  const auto device = lock_device();  // the process's handles serve one run at a time
  switch (config.precision) {
    case vocab::Precision::float64:
      return run_typed<double>(config, samples, false);
    case vocab::Precision::float32:
      return run_typed<float>(config, samples, false);
    case vocab::Precision::tf32:
      return run_typed<float>(config, samples, true);
    case vocab::Precision::bf16:
      return run_typed<float>(config, samples, false);
  }
  throw std::invalid_argument("CUDA backend: an unknown precision");
}

namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

// The budget is a share of the memory this process could use now (free plus what the pool holds unused),
// the same figure on every call however much the pool kept from the last one. The backend's options, when
// they say (constructor or NORMSIM_CUDA_RECOMPUTE), win over the config's recompute key.
MemoryPlan CudaBackend::plan(const sim::Config& config, int samples, double* budget) const {
  *budget = options_.memory_fraction * double(plannable_device_bytes());
  const vocab::Recompute mode = options_.recompute.value_or(config.recompute);
  const std::size_t element_bytes = config.precision == vocab::Precision::float64 ? 8 : 4;
  return plan_memory(sim::StackShape(config), element_bytes, mode, *budget, samples);
}

std::string CudaBackend::plan_summary(const sim::Config& config) const {
  double budget = 0;
  const MemoryPlan m = plan(config, config.samples, &budget);
  return describe_plan(m, budget);
}

std::string CudaBackend::refusal(const sim::Config& config, int) const {
  if (std::string why = bf16_cuda_refusal(config); !why.empty()) return why;
  double budget = 0;
  const MemoryPlan m = plan(config, 1, &budget);
  if (asks_jacobian(config) && m.checkpoint_every > 0) return jacobian_refusal();
  if (std::string why = embedding_refusal(config, m.checkpoint_every); !why.empty()) return why;
  if (std::string why = lanes_refusal(config, m.checkpoint_every); !why.empty()) return why;
  if (m.per_sample_bytes() > budget)
    return "keys 'width', 'depth', 'tokens', 'mlp_ratio'" +
           std::string(config.update != vocab::Update::none ? ", 'update'" : "") +
           std::string(config.steps > 0 ? ", 'steps'" : "") +
           std::string(asks_jacobian(config) ? ", 'metrics'" : "") + ": one sample needs " +
           sim::human_bytes(m.per_sample_bytes()) + " on the GPU (activations " +
           sim::human_bytes(m.activation_bytes) + ", weights " + sim::human_bytes(m.weight_bytes) +
           (m.recompute ? " redrawn in the backward" : " kept") +
           (m.side_pass_bytes > 0 ? (config.steps > 0 ? ", the optimizer's state and step 0's streams "
                                                      : ", kept for the update or the Jacobian probes ") +
                                        sim::human_bytes(m.side_pass_bytes)
                                  : "") +
           "); " + memory_holder() + " allows " + sim::human_bytes(budget) +
           " (docs/gpu.md: a smaller width, depth or tokens)";
  return "";
}

template <class R>
std::vector<sim::SampleRecord> CudaBackend::run_typed(const sim::Config& config, std::span<const int> samples,
                                                      bool tf32) {
  const sim::StackShape shape(config);
  const std::shared_ptr<const sim::Placement> owned = sim::placement_for(config);
  const sim::Placement& placement = *owned;
  const int n = int(samples.size()), K = shape.depth, steps = config.steps;
  std::vector<sim::SampleRecord> records(std::size_t(n) * (steps + 1));  // sample-major, as the CPU's
  if (n == 0) return records;
  info_ = CudaRunInfo{};
  reset_device_peak();

  // Plan: recompute or keep weights, and how many samples per batch fit the budget.
  double budget = 0;
  const MemoryPlan layout = plan(config, n, &budget);
  const bool recompute = layout.recompute;
  const int batch = layout.batch_samples;
  info_.recompute = recompute;
  info_.checkpoint_every = layout.checkpoint_every;
  info_.batch_samples = batch;
  info_.budget_bytes = budget;
  if (asks_jacobian(config) && layout.checkpoint_every > 0) throw sim::BackendUnavailable(jacobian_refusal());
  for (const std::string& why :
       {embedding_refusal(config, layout.checkpoint_every), lanes_refusal(config, layout.checkpoint_every)})
    if (!why.empty()) throw sim::BackendUnavailable(why);

  Blas blas(tf32);
  for (int first = 0; first < n; first += batch) {
    const int S = std::min(batch, n - first);
    ++info_.batches;
    const auto t0 = Clock::now();
    if (steps > 0) {  // the step records are made between the steps: device time includes them
      auto trained = train_batch<R>(config, shape, placement, blas, samples.subspan(first, S), layout);
      for (int s = 0; s < S; ++s)
        std::move(trained[s].begin(), trained[s].end(),
                  records.begin() + std::size_t(first + s) * (steps + 1));
      info_.device_seconds += seconds_since(t0);
      continue;
    }
    DeviceStats stats(K, S, placement.lanes());
    BatchRun<R> run(config, shape, placement, blas, samples.subspan(first, S), recompute, stats);
    if (layout.checkpoint_every > 0)
      run.checkpointed(layout.checkpoint_every);
    else
      run.whole();
    stats.copy_to_host();  // the batch's one synchronization: every per-layer scalar at once
    info_.device_seconds += seconds_since(t0);
    const auto t1 = Clock::now();
    for (int s = 0; s < S; ++s) {
      sim::SampleScalars scalars = stats.scalars(s, shape);
      run.add_jacobians(s, scalars);
      records[first + s] = sim::record_from_scalars(samples[first + s], scalars, shape, config.metrics);
    }
    info_.metrics_seconds += seconds_since(t1);
  }
  peak_ = std::max(peak_, device_bytes_peak());
  return records;
}

template std::vector<sim::SampleRecord> CudaBackend::run_typed<float>(const sim::Config&,
                                                                      std::span<const int>, bool);
template std::vector<sim::SampleRecord> CudaBackend::run_typed<double>(const sim::Config&,
                                                                       std::span<const int>, bool);

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
