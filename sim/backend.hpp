// The one interface every compute backend implements (CPU here, CUDA in gpu/), and the one factory that
// chooses between them. A backend runs whole samples: weights drawn from (seed, sample, layer, matrix,
// index), forward, backward, every metric.
#pragma once
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/config.hpp"
#include "sim/record.hpp"

namespace normsim::sim {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // The hardware this backend computes on, for provenance (run.json, verdicts.json, report.md).
  virtual std::string device() const { return name(); }
  // Runs the given sample indices of one configuration; returns one record per sample and step (steps 0 ..
  // config.steps), sample by sample in order, each sample's steps in order. Results must not depend on how
  // samples are split between calls or threads.
  virtual std::vector<SampleRecord> run(const Config& config, std::span<const int> samples) = 0;
  // Why this backend cannot run `config` in units of `unit_samples` samples (a precision it lacks, memory
  // it cannot have), naming the keys involved; "" when it can. Asked before anything is written.
  virtual std::string refusal(const Config&, int /*unit_samples*/) const { return ""; }
  // How the backend would lay out `config` (a device memory plan), one line for --dry-run; "" when it has
  // nothing to say.
  virtual std::string plan_summary(const Config&) const { return ""; }
  // Peak memory the backend used so far (bytes), or 0 when it does not track it.
  virtual std::size_t peak_memory_bytes() const { return 0; }
  // The CPU threads its arithmetic runs on, which the dry run's time estimate counts; 0 where it runs
  // elsewhere (a GPU) or on one host thread whatever --threads says (the reference device).
  virtual int compute_threads() const { return 0; }
};

class BackendUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The most CPU worker threads a run may ask for: past it OpenMP's runtime crashes (100000: a segfault in
// libgomp) or reserves absurd memory (2^31 - 1: 481 GB), and no machine has that many cores.
inline constexpr int kMaxThreads = 1024;

// The CPU worker threads a run uses when it asks for `threads` (0 = OpenMP's default: OMP_NUM_THREADS when
// set, else every core this process may run on). One definition, read by the backends and by what records
// the count (run.json, verdicts.json), so that the record is what ran.
int resolved_threads(int threads);

// choice: cpu, cuda, reference or auto (cuda when this build has it and a usable device exists, else cpu;
// never the reference device, which runs only when named); parsed
// from its name at the command line's or Python's edge (vocab::parse<vocab::BackendChoice>).
// threads: CPU worker threads, 0..kMaxThreads (0 = sim::resolved_threads: OMP_NUM_THREADS if set, else all
// cores). Throws std::invalid_argument for another count (a usage error: Python's ValueError),
// BackendUnavailable with the reason otherwise. With auto in a build with CUDA that falls back to the CPU,
// *fallback_reason (when given) receives the real cause. The CPU backend must have been registered
// (sim::cpu::register_backend(), sim/cpu/register.hpp); without it a CPU backend throws std::logic_error, a
// mistake of the program, not of its user.
std::unique_ptr<Backend> make_backend(vocab::BackendChoice choice, int threads,
                                      std::string* fallback_reason = nullptr);

// Registration hooks of the backends, which link sim while sim links neither: the CPU engine's (sim/cpu/
// provides it, through sim::cpu::register_backend()), the CUDA backend's (gpu/ provides it when built with
// CUDA, through gpu::register_backend()) and the reference device's (gpu/'s host build on gpu/mock/, through
// gpu::register_reference_backend()). device_usable says whether the CUDA backend can run here, and if
// not why (no device, driver, architecture, context).
using BackendFactory = std::unique_ptr<Backend> (*)(int threads);
using DeviceProbe = bool (*)(std::string* why);
void register_cpu_backend(BackendFactory factory);
void register_cuda_backend(BackendFactory factory, DeviceProbe device_usable);
void register_reference_backend(BackendFactory factory);
// Whether this program registered the reference device (for messages that suggest it).
bool reference_backend_registered();

}  // namespace normsim::sim
