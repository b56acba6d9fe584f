// The CUDA backend: every sample of a call runs as one batch on the device (split into several batches
// only when memory requires), through the same placements and build_stack as the CPU backend; metrics
// are computed on the device (gpu/device_stats.hpp) and turned into records by sim::record_from_scalars,
// the CPU backend's own definitions. Plain C++ header.
#pragma once
#include <cstddef>
#include <optional>
#include <string>

#include "gpu/device_probe.hpp"
#include "sim/backend.hpp"
#include "vocab/enums.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

struct CudaOptions {
  // Weights: `no` keeps every weight from the forward for the backward; `yes` draws them again from
  // Philox in the backward (one layer's weights live at a time); `auto_` recomputes when keeping them
  // would not fit the memory budget. Unset: the config's `recompute` key decides. Set, it overrides the
  // config (options_from_environment sets it from NORMSIM_CUDA_RECOMPUTE: auto, true or false).
  std::optional<vocab::Recompute> recompute;
  double memory_fraction = 0.85;  // of the device memory this process can use at the start of a call
};

// Where the time of the last run() went (seconds), and how it was planned.
struct CudaRunInfo {
  double device_seconds = 0;   // weights, forward, backward, every statistic, the copy of the scalars back
  double metrics_seconds = 0;  // host: the records made from the scalars (sim::record_from_scalars)
  int batches = 0;             // device batches the samples were split into
  int batch_samples = 0;       // samples per batch
  bool recompute = false;
  // Activations checkpointed every n sublayers (0: the whole tape kept; 1 also for a run without a backward
  // pass, which keeps one unit's tape at a time: MemoryPlan::forward_only).
  int checkpoint_every = 0;
  double budget_bytes = 0;  // device bytes the plan allowed (memory_fraction of the plannable memory)
};

struct MemoryPlan;

// This build's name for its backend: the CUDA backend, or, built on gpu/mock/ (NORMSIM_CUDA_MOCK), the
// reference device (docs/gpu.md, "The reference device"), whose results and run.json say so.
#ifdef NORMSIM_CUDA_MOCK
inline constexpr const char* kBackendName = "reference";
#else
inline constexpr const char* kBackendName = "cuda";
#endif

class CudaBackend final : public sim::Backend {
 public:
  explicit CudaBackend(int threads, CudaOptions options = options_from_environment());
  std::string name() const override { return kBackendName; }
  std::string device() const override;
  std::vector<sim::SampleRecord> run(const sim::Config& config, std::span<const int> samples) override;
  // A precision it lacks, or one sample that does not fit the device even with weights redrawn.
  std::string refusal(const sim::Config& config, int unit_samples) const override;
  std::string plan_summary(const sim::Config& config) const override;
  std::size_t peak_memory_bytes() const override { return peak_; }
  const CudaRunInfo& last_run() const { return info_; }
  static CudaOptions options_from_environment();

 private:
  // The plan for `samples` samples of `config` in this process's device memory now, and that budget.
  MemoryPlan plan(const sim::Config& config, int samples, double* budget) const;
  template <class R>
  std::vector<sim::SampleRecord> run_typed(const sim::Config& config, std::span<const int> samples,
                                           bool tf32);

  int threads_;
  CudaOptions options_;
  std::size_t peak_ = 0;
  CudaRunInfo info_;
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
