// A few steps of training on the CPU backend (steps > 0): one sample as the device of the training loop
// written once for every device (sim/training_loop.hpp: the steps, the records, where training ends). Each
// step's pass is run_pass on batch s (fixed: batch 0 every step) with the optimizer's hooks (while s <
// steps, the loss's backward records the gradients; from s = 1, W_s = W_0 + D is drawn through it). Admin's
// omega is measured at step 0 and replayed after, as the one update does (sim/cpu/update_pass.hpp).
// output_change at step s >= 1 is ||x_l(s) - x_l(0)||^2 / ||x_l(0)||^2 on batch 0 (with fresh batches, one
// more forward on batch 0 per step); at step 0 it is not stored. The coordinate-check metrics
// (docs/metrics.md): logit_mean_abs on the step's batch, logit_change on batch 0 as output_change, and, where
// a dwx_ or rel_dw_ metric is asked, the sizes of each matrix's update W_s - W_0 (sim/update_probe.hpp)
// from step 1 on. Every draw is Philox and every step runs in the pass's fixed order
// (sim/cpu/cpu_parallel.hpp), so a sample's records do not depend on the thread count.
#pragma once
#include <vector>

#include "sim/config.hpp"
#include "sim/cpu/cpu_parallel.hpp"
#include "sim/record.hpp"

namespace normsim::sim {

// The records of steps 0 .. config.steps of one sample, in step order (SampleRecord::step). A step whose
// forward or backward is not finite ends the training: it is recorded (with its nonfinite marker) and the
// later steps' records hold no value. `threads`: as measure_sample's.
template <class R>
std::vector<SampleRecord> train_sample_cpu(const Config& config, int sample, CpuWorkspace<R>& ws,
                                           int threads = 1);

}  // namespace normsim::sim
