// The CPU backend: the readable specification of every simulation (style.md), fast through Eigen's
// GEMMs and OpenMP. Samples run side by side, one per thread; threads beyond the number of samples split
// the GEMMs and weight draws inside a sample by a fixed partition (sim/cpu/cpu_parallel.hpp), so the numbers
// do not depend on the thread count. Weights are drawn when used and redrawn in the backward pass: memory for
// weights is one matrix per running sample, whatever the depth; or, when the whole stack's weights of the
// running samples fit an eighth of the machine's memory (cpu_keeps_weights, unit_plan.hpp), drawn once and
// kept for the backward. The backend holds its workspaces from run to run, so a grid's later units reuse the
// pages the first one touched.
#pragma once
#include "sim/backend.hpp"
#include "sim/cpu/cpu_parallel.hpp"

#include <vector>

namespace normsim::sim {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads);
  std::string name() const override { return "cpu"; }
  std::string device() const override;  // the CPU's model name and the threads used
  std::vector<SampleRecord> run(const Config& config, std::span<const int> samples) override;
  std::string refusal(const Config& config, int unit_samples) const override;
  int compute_threads() const override { return threads_; }

 private:
  int threads_;
  std::vector<CpuWorkspace<float>> ws32_;  // one per sample running at once
  std::vector<CpuWorkspace<double>> ws64_;
};

// One sample, all the way: tensors for tests and tools that want more than the record.
struct SampleTensors;
template <class R>
SampleTensors simulate_sample_cpu(const Config& config, int sample);
// The same with the caller's workspace (its buffers are reused; its threads work on the sample).
template <class R>
SampleTensors simulate_sample_cpu(const Config& config, int sample, CpuWorkspace<R>& ws);

}  // namespace normsim::sim
