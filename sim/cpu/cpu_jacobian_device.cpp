#include "sim/cpu/cpu_jacobian_device.hpp"

#include "sim/draws.hpp"

namespace normsim::sim {

MatD probe_direction(const DrawKey& key, int tokens, int width) {
  MatD u(tokens, width);
  fill_gaussian(u.data(), std::size_t(u.size()), key, 1.0);
  return u / u.norm();
}

template <class R>
JacobianEstimates estimate_jacobians(CpuTape<R>& graph, const std::vector<Value>& stream, SampleKey key,
                                     int probes, JacobianWanted wanted) {
  CpuJacobianDevice<R> dev(graph, stream, key);
  return probe_jacobians(dev, int(stream.size()) - 1, probes, wanted).of_sample(0);
}

template JacobianEstimates estimate_jacobians<float>(CpuTape<float>&, const std::vector<Value>&, SampleKey,
                                                     int, JacobianWanted);
template JacobianEstimates estimate_jacobians<double>(CpuTape<double>&, const std::vector<Value>&, SampleKey,
                                                      int, JacobianWanted);

}  // namespace normsim::sim
