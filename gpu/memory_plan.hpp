// The CUDA backend's memory plan, a pure function of the stack's shape and a byte budget: keep or redraw
// the weights, and how many samples run at once. Plain C++ (tested without a device; docs/gpu.md's memory
// table is checked against it by tests/gpu/test_memory_plan.cpp).
#pragma once
#include <cstddef>
#include <string>

#include "sim/stack.hpp"

namespace normsim::gpu {

// Elements per sample, all estimates erring high.
std::size_t activation_elements(const sim::StackShape& s);  // tape kept for the backward + largest transient
std::size_t weight_elements(const sim::StackShape& s);      // every weight of the stack
std::size_t largest_weight(const sim::StackShape& s);       // the recompute scratch
// Whether ||A^T B||_F for A (T x n), B (T x m) goes through the two T x T Gram matrices (cheaper when
// T (n + m) < n m), and the scratch elements either way.
bool frobenius_by_gram(int T, int n, int m);
std::size_t frobenius_scratch_elements(int T, int n, int m);

struct MemoryPlan {
  double activation_bytes = 0;  // per sample
  double weight_bytes = 0;      // per sample: every weight kept, or the recompute scratch
  bool recompute = false;
  int batch_samples = 0;  // at least 1, at most the samples asked for
  double per_sample_bytes() const { return activation_bytes + weight_bytes; }
};

// mode: "auto", "true" or "false" (recompute; auto redraws when that fits more samples per batch, or when
// keeping does not fit one); element_bytes: sizeof(R); budget: device bytes the run may use; samples: how
// many the call runs.
MemoryPlan plan_memory(const sim::StackShape& s, std::size_t element_bytes, const std::string& mode,
                       double budget, int samples);

}  // namespace normsim::gpu
