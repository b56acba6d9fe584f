// The CPU device of the Jacobian probes (sim/jacobian_probes.hpp): one sample, whose tape of the forward
// pass is reversed again for every probe (a CPU tape keeps its values through a reverse pass), the probe
// directions drawn and their squared norms summed in float64 on the host.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "sim/cpu/cpu_tape_device.hpp"
#include "sim/gaussian.hpp"
#include "sim/jacobian_probes.hpp"
#include "sim/stream_metrics.hpp"

namespace normsim::sim {

// A direction uniform on the unit sphere of R^{T x d}: Gaussian entries of the keyed draw over their norm.
MatD probe_direction(const DrawKey& key, int tokens, int width);

template <class R>
class CpuJacobianDevice {
 public:
  using Direction = MatD;
  using Sums = std::vector<double>;
  static constexpr bool rebuilds_tape = false;

  // `stream` holds x_0..x_K of `graph`, whose forward pass is complete.
  CpuJacobianDevice(CpuTape<R>& graph, const std::vector<Value>& stream, SampleKey key)
      : graph_(graph), stream_(stream), key_(key) {}

  int samples() const { return 1; }
  double entries() const { return double(top().size()); }
  MatD direction(std::uint32_t index, Stream stream) const {
    return probe_direction(DrawKey{key_.seed, key_.sample, index, stream}, int(top().rows()),
                           int(top().cols()));
  }
  Mat<R> tangent(const MatD& u) const { return u.cast<R>(); }
  Sums sums(std::size_t slots) const { return Sums(slots); }
  void squared_norm(const Mat<R>& g, Sums& sums, std::size_t slot) const {
    sums[slot] = g.template cast<double>().squaredNorm();
  }
  void squared_distance(const Mat<R>& g, const MatD& u, Sums& sums, std::size_t slot) const {
    sums[slot] = (g.template cast<double>() - u).squaredNorm();
  }
  static std::vector<double> host(Sums& sums) { return std::move(sums); }
  // Every pass on the forward pass's own tape, which holds every stream.
  template <class Pass>
  void with_tape(int, int, Pass&& pass) {
    pass(graph_, stream_, 0);
  }

 private:
  const Mat<R>& top() const { return graph_.value(stream_.back()); }

  CpuTape<R>& graph_;
  const std::vector<Value>& stream_;
  SampleKey key_;
};

// The estimates of one sample from `probes` probe directions per statistic, drawn from (seed, sample).
template <class R>
JacobianEstimates estimate_jacobians(CpuTape<R>& graph, const std::vector<Value>& stream, SampleKey key,
                                     int probes, JacobianWanted wanted);

}  // namespace normsim::sim
