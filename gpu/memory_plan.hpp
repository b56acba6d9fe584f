// The CUDA backend's memory plan, a pure function of the stack's shape and a byte budget: keep or redraw
// the weights, keep the whole tape or checkpoint it, and how many samples run at once. Plain C++ (tested
// without a device; docs/gpu.md's memory table is checked against it by tests/gpu/test_memory_doc.cpp).
#pragma once
#include <cstddef>
#include <string>

#include "sim/stack.hpp"
#include "vocab/enums.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// Elements per sample, all estimates erring high.
std::size_t activation_elements(const sim::StackShape& s);  // whole tape kept for the backward + transients
// Checkpointed every `every` sublayers: the streams x_0, x_every, x_2every, ... kept, each segment's tape
// rebuilt from its first stream in the backward, so only one segment's tape lives at a time.
std::size_t checkpointed_activation_elements(const sim::StackShape& s, int every);
// Whether a run has a backward pass: a backward metric is asked for, or the update steps on the loss.
bool runs_backward(const sim::StackShape& s);
// Without a backward pass the stack runs unit by unit (gpu/batch_run.hpp), each unit's tape freed once its
// streams are measured: the stream in hand and its copy, the largest tape of 3 consecutive sublayers (the
// longest placement unit, a decoder layer) and the largest transient.
std::size_t forward_only_activation_elements(const sim::StackShape& s);
std::size_t weight_elements(const sim::StackShape& s);  // every weight of the stack
// The edge matrices (sim/edges.hpp), held by every pass's tape: each W_e, the embedding's input u, the
// logits and their gradient, and a recorded gradient of each W_e (as factors or product) with the one sgd or
// adam update (a training step's go to the optimizer: optimizer_elements).
std::size_t edge_elements(const sim::StackShape& s);
std::size_t largest_weight(const sim::StackShape& s);  // the recompute scratch
// Device bytes per sample of the statistics' scratch (gpu/stream_statistics.hpp): row sums, column squares,
// the stream in double, the Gram matrices held for one solve (gram_slots of them), their eigenvalues, the
// eigensolver's workspace (estimated as n^2 a Gram held + 6n doubles), and the per-layer scalars themselves
// (gpu/device_stats.hpp).
double statistics_bytes(const sim::StackShape& s, std::size_t element_bytes);
// Whether ||A^T B||_F for A (T x n), B (T x m) goes through the two T x T Gram matrices (cheaper when
// T (n + m) < n m), and the scratch elements either way.
bool frobenius_by_gram(int T, int n, int m);
std::size_t frobenius_scratch_elements(int T, int n, int m);

// update = sgd/adam: a weight's loss gradient A^T B (A: T x n, B: T x m) is kept as its factors when they
// are smaller than the product, T (n + m) < n m (gpu/gpu_weight_update.hpp).
bool gradient_by_factors(int T, int n, int m);
// Elements per sample the parameter update adds (update != none; gpu/batch_run.hpp's updated pass): the first
// pass's streams x_0..x_K kept to compare with, the loss gradients recorded for sgd/adam, and one matrix in
// flight (random's G, or a gradient multiplied out of its factors). 0 for update = none. With steps > 0 (the
// training loop, gpu/batch_training.hpp): step 0's streams and loss input kept to compare with, and
// optimizer_elements.
std::size_t update_elements(const sim::StackShape& s);
// The training loop's optimizer (gpu/gpu_optimizer.hpp), per sample: of every trained matrix (sublayers with
// their biases, edge matrices) Adam's D, m and v, and one gradient in flight (the largest), or SGD's gradient
// of the step and the sum of the gradients; with a dwx_ or rel_dw_ metric, the probe's transients. 0 without
// steps.
std::size_t optimizer_elements(const sim::StackShape& s);

// Elements per sample the Jacobian metrics add (gpu/batch_jacobians.cpp): the first pass's streams for the
// blocks' rebuilt units (unless the one update keeps them already) and a probe direction with its copy. Their
// rebuilt tapes are at most the whole tape, which the first pass has freed.
std::size_t jacobian_elements(const sim::StackShape& s);

struct MemoryPlan {
  double activation_bytes = 0;  // per sample: the whole tape, or the checkpoints and one segment's tape
  double weight_bytes = 0;      // per sample: every weight kept, or the recompute scratch
  double statistics_bytes = 0;  // per sample
  double side_pass_bytes = 0;   // per sample: update_elements + jacobian_elements
  bool recompute = false;
  // 0: the whole tape is kept; n > 0: activations checkpointed every n sublayers (only when the whole tape
  // does not fit one sample; the segment length minimizes memory; gpu/batch_run.hpp rounds it up to a
  // multiple of the placement's span).
  int checkpoint_every = 0;
  bool forward_only = false;  // no backward pass: checkpoint_every 1, one unit's tape at a time
  int batch_samples = 0;      // at least 1, at most the samples asked for
  double per_sample_bytes() const {
    return activation_bytes + weight_bytes + statistics_bytes + side_pass_bytes;
  }
};

// mode: the recompute key's value (auto redraws when that fits more samples per batch, or when
// keeping does not fit one); element_bytes: sizeof(R); budget: device bytes the run may use; samples: how
// many the call runs. When one sample does not fit with the whole tape, the plan checkpoints activations
// (and, unless mode is "false", redraws the weights).
MemoryPlan plan_memory(const sim::StackShape& s, std::size_t element_bytes, vocab::Recompute mode,
                       double budget, int samples);

// One line: weights, tape, statistics, samples per batch and the budget (the --dry-run plan prints it).
std::string describe_plan(const MemoryPlan& p, double budget);

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
