// Input-output Jacobian statistics of one sample, estimated from random vector-Jacobian products on the
// CPU tape (definitions: docs/metrics.md "Jacobians"). Reverse mode, because one reverse pass from x_K
// gives J_{K,l}^T u for every layer l at once, where forward tangents would need one pass per starting
// layer; J^T u and J v have the same statistics here, since every J is square (T d x T d) and
// E||J^T u||^2 = tr(J J^T)/n = tr(J^T J)/n for u uniform on the unit sphere of R^n.
#pragma once
#include <span>
#include <vector>

#include "sim/cpu_tape_device.hpp"
#include "sim/gaussian.hpp"
#include "sim/jacobian_wanted.hpp"
#include "sim/stream_metrics.hpp"

namespace normsim::sim {

struct JacobianEstimates {
  std::vector<double> jac_sq;              // per stream l = 0..K: mean squared singular value of dx_K/dx_l
  std::vector<double> jac_spread;          // per stream: their relative variance (empty with one probe)
  std::vector<double> block_identity_dev;  // per sublayer k: ||dx_{k+1}/dx_k - I||_F / ||I||_F
};

// A direction uniform on the unit sphere of R^{T x d}: Gaussian entries of the keyed draw over their norm.
MatD probe_direction(const DrawKey& key, int tokens, int width);

// From quadratic forms q_p = ||J^T u_p||^2 of P >= 2 unit probes u_p uniform on the sphere of R^n:
// (m2 - m1^2)/m1^2 with m_j the mean of sigma^(2j) over J's n singular values. Unbiased numerator:
// Var(q) = 2 (m2 - m1^2)/(n + 2) for such probes, so m2 - m1^2 = (n + 2)/2 * (sample variance of q).
double relative_spectral_variance(std::span<const double> q, double n);

// `probes` probe directions per statistic, drawn from (seed, sample); `stream` holds x_0..x_K of `graph`,
// whose forward pass is complete. Costs about `probes` reverse passes for each of the two (docs/metrics.md).
template <class R>
JacobianEstimates estimate_jacobians(CpuTape<R>& graph, const std::vector<Value>& stream, SampleKey key,
                                     int probes, JacobianWanted wanted);

}  // namespace normsim::sim
