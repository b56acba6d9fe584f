// What a configuration costs before it runs: the arithmetic of one sample (the scheduler's and the
// progress bar's weight), the CPU backend's memory for one sample by part, and the machine's memory. The
// CLI refuses a grid whose unit cannot fit before anything is written, and `normsim run --dry-run` prints
// the plan.
#pragma once
#include <cstddef>
#include <string>

#include "sim/config.hpp"

namespace normsim::sim {

// Relative cost of one sample (about the multiply-adds of the forward pass): per sublayer, MLP 2 T d h
// (3 T d h for SwiGLU), h = round(mlp_ratio d); attention 4 T d^2 + 2 T^2 d; a transformer sublayer the
// mean of the two (they alternate); plus T^2 d per stream for eff_rank's decomposition; times depth;
// float64 counts twice. The backward pass costs about twice the forward in every case, so it scales all
// configs alike and is left out.
double sample_cost(const Config& c);

// Bytes the CPU backend holds at the peak of one sample (the backward pass), by part: the largest weight
// matrix (weights are drawn one at a time, forward and again backward), the activations the branches and
// the tape keep for the backward, and the float64 copies of the streams and gradients the metrics read.
// `slack` covers the backward's temporaries and the allocator's unreturned pages: 20 % of the rest, as peak
// RSS measured 1.16x and 1.18x the counted bytes (widths 512 and 1024, MLP and transformer, 2 threads).
struct SampleMemory {
  double weights = 0, activations = 0, metric_copies = 0, slack = 0;
  double total() const { return weights + activations + metric_copies + slack; }
};
SampleMemory cpu_sample_memory(const Config& c);

// Bytes of all the weight matrices of one sample's stack, and whether `concurrent` samples keep them from
// the forward to the backward instead of redrawing them (CpuWorkspace::keep_weights), as the `recompute`
// key says: true never, false always (cpu_memory_refusal refuses what does not fit), auto when together
// they take at most an eighth of `machine` and fit beside the memory cpu_sample_memory counts. All or none,
// so that a stack too large to keep (width 2048 x depth 128: 16 GiB) costs what the plan says. The numbers
// are the same either way (Philox redraws the same weights).
double cpu_stack_weight_bytes(const Config& c);
bool cpu_keeps_weights(const Config& c, int concurrent, double machine);
// Bytes of one sample's optimizer state with steps > 0 (sim/cpu/optimizer.hpp): sgd's sum of gradients S, or
// Adam's displacement D, m and v: 1x (sgd) or 3x (adam) the stack's weights and edge matrices; 0 without
// steps.
double cpu_optimizer_bytes(const Config& c);

// Why `c` cannot run on the CPU backend with `concurrent` samples held at once (one per thread) in
// `machine` bytes, beginning with the keys that make it large (or `recompute`) and giving the figures; ""
// when it fits.
std::string cpu_memory_refusal(const Config& c, int concurrent, double machine);

// The memory this process may use: physical memory, or the cgroup's limit where one is set (bytes).
double machine_memory_bytes();

// "16 TB", "1.5 GB", "300 MB": bytes in the largest unit that keeps the number >= 1 (powers of 1000).
std::string human_bytes(double bytes);

}  // namespace normsim::sim
