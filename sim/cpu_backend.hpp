// The CPU backend: the readable specification of every simulation (style.md), fast through Eigen's
// GEMMs and OpenMP over samples. Samples run independently, one per thread, with single-threaded GEMMs,
// so the numbers do not depend on the thread count.
#pragma once
#include "sim/backend.hpp"

namespace normsim::sim {

class CpuBackend final : public Backend {
 public:
  explicit CpuBackend(int threads);
  std::string name() const override { return "cpu"; }
  std::vector<SampleRecord> run(const Config& config, std::span<const int> samples) override;
  std::string refusal(const Config& config, int unit_samples) const override;
  int threads() const { return threads_; }

 private:
  int threads_;
};

// One sample, all the way: tensors for tests and tools that want more than the record.
struct SampleTensors;
template <class R>
SampleTensors simulate_sample_cpu(const Config& config, int sample);

}  // namespace normsim::sim
