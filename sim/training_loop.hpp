// The training loop (steps > 0; docs/design/parametrization.md 3.5), written once for every device: for s = 0
// .. steps, one pass on batch s (fixed batches: batch 0 every step) that measures every asked metric at step
// s, each sample's record of step s, and, while s < steps, the optimizer's step from that pass's gradients
// (sim/training_optimizer.hpp). A sample whose pass at a step was not finite ends its training there: that
// step is recorded (with its nonfinite marker) and its later steps' records hold no value. No pass runs
// once no sample trains.
//
// A device runs S samples together (the CPU backend one sample, sim/cpu/train_loop.cpp; the CUDA backend a
// batch, gpu/batch_training.cpp) and supplies:
//   int samples() const                 S
//   void run_step(int s)                 step s's pass of all S samples (one that no longer trains may run
//                                        along; its numbers are dropped here)
//   SampleRecord record(int i, int s)    sample i's record of step s, after run_step(s)
//   bool trained(int i) const            after record(i, s): whether sample i's pass of step s was finite
//                                        (its forward and backward), so that it trains on
//   void step()                          the optimizer's step from the last pass's gradients
#pragma once
#include <algorithm>
#include <span>
#include <vector>

#include "sim/metric_set.hpp"
#include "sim/sample_metrics.hpp"

namespace normsim::sim {

// The records of steps 0 .. steps of each of the device's samples (`samples`, their indices), one vector per
// sample in step order (SampleRecord::step).
template <class Device>
std::vector<std::vector<SampleRecord>> run_training(Device& device, int steps, const StackShape& shape,
                                                    std::span<const int> samples) {
  const int S = device.samples();
  std::vector<std::vector<SampleRecord>> records(static_cast<std::size_t>(S));
  std::vector<bool> training(static_cast<std::size_t>(S), true);
  for (int s = 0; s <= steps; ++s) {
    const bool any = std::find(training.begin(), training.end(), true) != training.end();
    if (any) device.run_step(s);
    for (int i = 0; i < S; ++i) {
      const std::size_t at = std::size_t(i);
      SampleRecord rec =
          training[at] ? device.record(i, s)
                       : record_from_scalars(samples[at], empty_scalars(shape.depth), shape, MetricSet{});
      rec.step = s;
      records[at].push_back(std::move(rec));
      if (training[at]) training[at] = device.trained(i);
    }
    if (s < steps && std::find(training.begin(), training.end(), true) != training.end()) device.step();
  }
  return records;
}

}  // namespace normsim::sim
