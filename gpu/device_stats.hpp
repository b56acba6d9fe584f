// The per-layer statistics of one batch of S samples, kept on the device until the batch ends: one block
// of kLayerFields x S doubles per stream x_0..x_K (and one for the output y), field-major. Kernels write
// them as the forward and backward passes go; copy_to_host() brings them all back with one asynchronous
// copy into pinned memory and one synchronization, and scalars() hands one sample to
// sim::record_from_scalars (the CPU backend's definitions of what is stored and flagged).
#pragma once
#include <cstddef>

#include "gpu/device_buffer.hpp"
#include "gpu/stat_ops.hpp"
#include "sim/sample_metrics.hpp"
#include "sim/stack.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

// Fields of a block (offsets in units of S doubles).
inline constexpr int lf_stream = 0;            // kStreamFields of x_l (the output's: only f_nonfinite)
inline constexpr int lf_grad = kStreamFields;  // kStreamFields of dLoss/dx_l (f_act_sq is grad_sq)
inline constexpr int lf_eff_rank = 2 * kStreamFields;  // x_l's effective rank
inline constexpr int lf_branch_sum = lf_eff_rank + 1;  // sublayer l: sum of its raw branch output squared
inline constexpr int lf_gradw = lf_branch_sum + 1;     // sublayer l: ||dL/dW||_F per WeightKind, in order
// x_l with a parameter update (output_change = change / change_ref): the sum of (x'_l - x_l)^2 over the
// updated pass's stream x'_l, and the sum of x_l^2.
inline constexpr int lf_change = lf_gradw + sim::kWeightKinds;
inline constexpr int lf_change_ref = lf_change + 1;
inline constexpr int kLayerFields = lf_change_ref + 1;
// The output block in a training step (gpu/batch_training.hpp), in fields it has no other use for: the sums
// over the loss's input z (y, or the logits) of |z| (logit_mean_abs) and of |z - z_0| (logit_change).
inline constexpr int lf_logit_abs = lf_branch_sum;
inline constexpr int lf_logit_change = lf_change;

// A block of n > 1 lanes (docs/design/multistream.md 3.3) adds a block per lane i of every stream x_l
// (lf_stream, lf_grad and lf_eff_rank of x^i_l, its pair fields with x^i_{l+1}), then, per stream and pair of
// lanes i < j, kStreamFields x S whose f_cos_next is the pair's mean token cosine (lane_cos is their mean).
class DeviceStats {
 public:
  DeviceStats(int depth, int S, int lanes = 1);  // every field NaN
  // The doubles it holds per sample (gpu/memory_plan.cpp counts them).
  static std::size_t doubles_per_sample(int depth, int lanes);
  ~DeviceStats();
  DeviceStats(const DeviceStats&) = delete;
  DeviceStats& operator=(const DeviceStats&) = delete;
  int output_block() const { return depth_ + 1; }
  int lane_block(int l, int lane) const { return depth_ + 2 + l * lanes_ + lane; }
  // Device pointer to S doubles: field f of block b (b = l for x_l, output_block() for y, lane_block(l, i)).
  double* field(int block, int f) const { return d_.get() + (std::size_t(block) * kLayerFields + f) * S_; }
  // kStreamFields x S of pair p (in the order i < j, j fastest) of x_l's lanes.
  double* lane_pair(int l, int p) const { return d_.get() + pair_offset(l, p); }
  void copy_to_host();
  // Sample s's metrics, values as sim::measure_sample computes them (after copy_to_host).
  sim::SampleScalars scalars(int s, const sim::StackShape& shape) const;

 private:
  std::size_t pair_offset(int l, int p) const {
    return (std::size_t(blocks_) * kLayerFields + (std::size_t(l) * pairs_ + p) * kStreamFields) * S_;
  }
  double host(int block, int f, int s) const { return h_[(std::size_t(block) * kLayerFields + f) * S_ + s]; }
  // x_l's (or a lane's) stream, eff_rank and grad_sq of sample s into values (as sim::SampleScalars).
  void stream_values(int block, int l, int s, std::vector<std::vector<double>>& values) const;
  void lane_values(int s, sim::SampleScalars& r) const;
  int depth_, S_, lanes_, blocks_, pairs_;
  DeviceBuffer<double> d_;
  double* h_ = nullptr;  // pinned
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
