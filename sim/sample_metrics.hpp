// Turns one sample's streams, stream gradients and sublayer records into a SampleRecord: every metric at
// every layer, and where a NaN or Inf first appeared. Backend-independent (the CUDA backend can use it on
// streams it copies back, or compute the same definitions on the device).
#pragma once
#include <vector>

#include "sim/cpu_branches.hpp"
#include "sim/record.hpp"
#include "sim/stack.hpp"
#include "sim/stream_metrics.hpp"

namespace normsim::sim {

struct SampleTensors {
  std::vector<MatD> stream;            // x_0..x_K
  bool output_finite = true;           // y
  std::vector<MatD> grad;              // dLoss/dx_0..dLoss/dx_K (empty when the forward pass failed)
  std::vector<double> branch_sq;       // per sublayer
  std::vector<WeightGradNorms> gradw;  // per sublayer
  std::vector<double> output_change;   // per stream x_0..x_K; empty when update = "none" or not measured
};

// `shape` says which weight matrices each sublayer has (only theirs get gradw values). A statistic that is
// NaN or Inf although its stream is finite is listed in SampleRecord::nonfinite_statistics.
SampleRecord measure_sample(int sample, const SampleTensors& t, const StackShape& shape);

}  // namespace normsim::sim
