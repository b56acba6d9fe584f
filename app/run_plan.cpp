#include "app/run_plan.hpp"

#include <algorithm>
#include <cstdio>

#include "sim/run/config_schema.hpp"
#include "sim/run/results.hpp"
#include "sim/run/sweep.hpp"
#include "sim/unit_plan.hpp"

namespace normsim::app {

namespace {

// Nominal CPU rate for the estimate: W1's measured 72 GFLOP/s on 2 cores (docs/benchmarks.md), per core.
constexpr double kFlopsPerThread = 36e9;

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf,
                s < 60     ? "%.2g s"
                : s < 3600 ? "%.1f min"
                           : "%.1f h",
                s < 60     ? s
                : s < 3600 ? s / 60
                           : s / 3600);
  return buf;
}

}  // namespace

int print_plan(std::ostream& os, const sim::Grid& grid, const sim::Backend& backend, int unit_samples) {
  int refused = 0;
  const auto units = sim::make_units(grid, unit_samples);
  double total_flops = 0;
  std::size_t samples = 0;
  for (const auto& c : grid.configs) samples += static_cast<std::size_t>(c.samples);
  const int cpu_threads = backend.compute_threads();
  os << grid.config_file << ": " << grid.configs.size() << " configurations, " << samples << " samples, "
     << units.size() << " units; backend " << backend.name()
     << (cpu_threads > 0 ? ", " + std::to_string(cpu_threads) + " threads" : "") << "; this machine has "
     << sim::human_bytes(sim::machine_memory_bytes()) << "\n";
  for (std::size_t c = 0; c < grid.configs.size(); ++c) {
    const sim::Config& cfg = grid.configs[c];
    const sim::SampleMemory m = sim::cpu_sample_memory(cfg);
    // sample_cost counts multiply-adds of the forward pass: x2 flops, x3 with the backward.
    const double flops = 6.0 * sim::sample_cost(cfg) * cfg.samples;
    total_flops += flops;
    const std::string why = backend.refusal(cfg, unit_samples);
    const std::string layout = backend.plan_summary(cfg);
    refused += !why.empty();
    os << "  config " << c << ": " << sim::describe_config(grid, int(c)) << "\n    " << cfg.samples
       << " samples; CPU memory per sample " << sim::human_bytes(m.total()) << " (weights "
       << sim::human_bytes(m.weights) << ", activations and temporaries "
       << sim::human_bytes(m.activations + m.metric_copies + m.slack) << "); " << flops / 1e9 << " GFLOP"
       << (layout.empty() ? "" : "\n    " + layout) << (why.empty() ? "" : "\n    REFUSED: " + why) << "\n";
  }
  if (cpu_threads > 0)
    os << "estimated CPU time: " << seconds_text(total_flops / (kFlopsPerThread * cpu_threads)) << " at "
       << kFlopsPerThread / 1e9 << " GFLOP/s per thread\n";
  else  // the rate is the CPU backend's: no figure for a GPU or the reference device's plain loops
    os << "no time estimate for the " << backend.name() << " backend (the estimate is the CPU backend's)\n";
  return refused;
}

}  // namespace normsim::app
