// One batch of S samples on the device, start to end: weights, forward, the statistics of every stream and
// of the output, backward with the statistics of every stream gradient. Every metric lands in DeviceStats;
// nothing comes to the host (but Admin's omega, which the placement reads between sublayers). Either the
// whole tape is kept (whole()), or the activations are checkpointed every n sublayers (checkpointed(n)):
// a first forward pass keeps only the streams x_0, x_n, x_2n, ...; the backward rebuilds each segment's tape
// from its first stream (Admin's omega replayed, as the backward treats it as a constant) and runs the
// segment's reverse pass, last segment first.
#pragma once
#include <span>

#include "gpu/blas.hpp"
#include "gpu/device_stats.hpp"
#include "gpu/gpu_graph.hpp"
#include "gpu/stream_statistics.hpp"
#include "sim/stack_build.hpp"

namespace normsim::gpu {

template <class R>
class BatchRun {
 public:
  BatchRun(const sim::Config& config, const sim::StackShape& shape, const sim::Placement& placement,
           const Blas& blas, std::span<const int> samples, bool recompute, DeviceStats& stats);
  void whole();
  void checkpointed(int every);  // every: rounded up to a multiple of the placement's span

 private:
  DeviceBuffer<R> input() const;  // the raw x_0 of every sample
  DeviceBuffer<R> copy(const R* d_x) const;
  // Statistics of the streams a segment starting at x_first holds (each pair with the next stream; x_K and
  // the output when the segment ends the stack).
  void measure_streams(GpuGraph<R>& g, const sim::StackValues& sv, int first);
  // Reverse pass of graph g from `from` with gradient dout; measures the gradient of sv.stream[i] as
  // x_{first+i} for i < watched and returns a copy of the gradient of sv.stream[0].
  DeviceBuffer<R> backward(GpuGraph<R>& g, const sim::StackValues& sv, sim::Value from, DeviceBuffer<R> dout,
                           int first, int watched);

  const sim::Config& config_;
  const sim::StackShape& shape_;
  const sim::Placement& placement_;
  int S_;
  std::size_t per_;  // T x d
  DeviceBuffer<std::uint32_t> ids_;
  DeviceBuffer<R> scratch_;
  GpuContext<R> ctx_;
  DeviceStats& stats_;
  StreamStatistics<R> measure_;
  bool backward_;  // the config asks for a backward metric (else no backward pass runs, as on the CPU)
};

}  // namespace normsim::gpu
