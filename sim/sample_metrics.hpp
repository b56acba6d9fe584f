// Turns one sample's streams, stream gradients and sublayer records into a SampleRecord: every metric at
// every layer, and where a NaN or Inf first appeared. Backend-independent: the CPU backend measures the
// tensors (measure_sample); the CUDA backend computes the same definitions on the device and hands the
// per-layer scalars to record_from_scalars, the one place that decides what is stored and flagged.
#pragma once
#include <limits>
#include <vector>

#include "sim/branch_hooks.hpp"
#include "sim/metric_set.hpp"
#include "sim/record.hpp"
#include "sim/stack.hpp"
#include "sim/stream_metrics.hpp"
#include "sim/update_sizes.hpp"

namespace normsim::sim {

struct SampleTensors {
  std::vector<MatD> stream;            // x_0..x_K
  bool output_finite = true;           // y
  std::vector<MatD> grad;              // dLoss/dx_0..dLoss/dx_K (empty when the forward pass failed)
  std::vector<double> branch_sq;       // per sublayer
  std::vector<WeightGradNorms> gradw;  // per sublayer
  // Jacobian statistics (sim/jacobian_probes.hpp); empty when not asked for (`metrics`).
  std::vector<double> jac_sq, jac_spread;  // per stream
  std::vector<double> block_identity_dev;  // per sublayer
  std::vector<double> output_change;       // per stream x_0..x_K; empty when update = "none" or not measured
  // A block of n > 1 lanes: lanes[i] = x^i_0..x^i_K and lane_grad[i] their gradients (empty when the
  // backward did not run); `stream` then holds the lanes' mean and `grad` the sum of the lanes' gradients.
  std::vector<std::vector<MatD>> lanes, lane_grad;
  // A step of the training loop (sim/cpu/train_loop.hpp; SampleScalars::train_step): the sizes of the step's
  // updates (sim/update_sizes.hpp; NaN at step 0) and the logits' metrics (NaN where not measured).
  int train_step = -1;
  UpdateSizes update_sizes;
  double logit_mean_abs = std::numeric_limits<double>::quiet_NaN();
  double logit_change = std::numeric_limits<double>::quiet_NaN();
};

// Every metric of one sample as some backend computed it, before the forward/backward cut-offs apply:
// values[m][i] as SampleRecord::values (NaN where not computed), and which tensors hold only finite entries.
struct SampleScalars {
  std::vector<std::vector<double>> values;
  std::vector<bool> stream_finite;  // x_0..x_K
  bool output_finite = true;        // y
  std::vector<bool> grad_finite;    // dLoss/dx_0..dLoss/dx_K
  bool updated = false;             // output_change was measured (update != "none")
  // The training loop's step (steps >= 1; -1 outside it): the coordinate-check metrics (dwx_*, rel_dw_*,
  // logit_*) are measured there only, those of an update from step 1 on.
  int train_step = -1;
  // A block of n > 1 lanes: lanes[i] as `values` for lane i, sized for the metrics measured per lane
  // (sim/lane_metrics.hpp), the others empty; `values` holds the lanes' mean's. The mean's finiteness is
  // the lanes' cut-off too: a lane's NaN or Inf makes their sum's.
  std::vector<std::vector<std::vector<double>>> lanes;
};

// A training step's update sizes (dwx_*, rel_dw_*; sim/update_probe.hpp) into s.values, for depth K =
// s.stream_finite.size() - 1: the CPU's loop and the CUDA backend's (gpu/batch_training.hpp) put them alike.
void put_update_sizes(SampleScalars& s, const UpdateSizes& u);
// Whether m asks for an update size (their rows run from dwx_w1 to rel_dw_out in vocab/metrics.def), which
// a training step then measures.
bool wants_update_sizes(const MetricSet& m);

// The metric (index into metric_table()) of the gradient norm of weight w.
int gradw_metric(WeightKind w);  // its gradw_ metric id

// values sized as a record's for depth K (stream metrics K + 1 entries, sublayer metrics K), all NaN;
// every tensor finite; with n > 1 lanes, `lanes` sized likewise for the metrics measured per lane.
SampleScalars empty_scalars(int K, int lanes = 1);

// The record: of the metrics in `wanted` (the others stay NaN), each lane's with its mean's, the forward
// metrics up to the first non-finite stream (or output), the backward metrics from x_K down to the first
// non-finite gradient (none when `wanted` has no backward metric), only the matrices sublayer k has
// (matrices_at(shape, k)); a stored statistic that is NaN or Inf although its tensors are finite is listed in
// nonfinite_statistics.
SampleRecord record_from_scalars(int sample, const SampleScalars& s, const StackShape& shape,
                                 const MetricSet& wanted);

// Measures the tensors (only what record_from_scalars will store), then record_from_scalars. `t.grad` may be
// empty when `wanted` has no backward metric. The per-stream metrics split across `threads` (the same
// values for any count).
SampleRecord measure_sample(int sample, const SampleTensors& t, const StackShape& shape,
                            const MetricSet& wanted, int threads = 1);

}  // namespace normsim::sim
