#include "sim/jacobian_probes.hpp"

#include <cmath>
#include <limits>

#include "sim/draws.hpp"

namespace normsim::sim {

MatD probe_direction(const DrawKey& key, int tokens, int width) {
  MatD u(tokens, width);
  fill_gaussian(u.data(), std::size_t(u.size()), key, 1.0);
  return u / u.norm();
}

double relative_spectral_variance(std::span<const double> q, double n) {
  const double P = double(q.size());
  if (q.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  double mean = 0;
  for (double v : q) mean += v / P;
  double ss = 0;
  for (double v : q) ss += (v - mean) * (v - mean);
  return (n + 2.0) / 2.0 * (ss / (P - 1.0)) / (mean * mean);
}

namespace {

// jac_sq and jac_spread at every layer: one reverse pass from x_K per probe.
template <class R>
void estimate_stack(CpuTape<R>& graph, const std::vector<Value>& stream, SampleKey key, int probes,
                    JacobianEstimates& out) {
  const int L = int(stream.size());
  const Mat<R>& top = graph.value(stream.back());
  const double n = double(top.size());
  std::vector<std::vector<double>> q(L, std::vector<double>(probes));
  for (int p = 0; p < probes; ++p) {
    const DrawKey dk{key.seed, key.sample, std::uint32_t(p), Stream::jacobian_probe};
    const MatD u = probe_direction(dk, int(top.rows()), int(top.cols()));
    const std::vector<Mat<R>> g = graph.vjp(stream.back(), u.cast<R>(), stream);
    for (int l = 0; l < L; ++l) q[l][p] = g[l].template cast<double>().squaredNorm();
  }
  for (int l = 0; l < L; ++l) {
    double m = 0;
    for (double v : q[l]) m += v / probes;
    out.jac_sq.push_back(m);
    // Undefined with one probe: left out rather than recorded as a non-finite statistic.
    if (probes >= 2) out.jac_spread.push_back(relative_spectral_variance(q[l], n));
  }
}

// block_identity_dev: ||J_k - I||_F^2 / n = E||(J_k - I)^T u||^2 over unit u, one short reverse pass (the
// ops of sublayer k only) per probe and block.
template <class R>
void estimate_blocks(CpuTape<R>& graph, const std::vector<Value>& stream, SampleKey key, int probes,
                     JacobianEstimates& out) {
  const int K = int(stream.size()) - 1;
  out.block_identity_dev.resize(K);
  for (int k = 0; k < K; ++k) {
    const Mat<R>& x = graph.value(stream[k + 1]);
    double sum = 0;
    for (int p = 0; p < probes; ++p) {
      const DrawKey dk{key.seed, key.sample, std::uint32_t(k * probes + p), Stream::block_probe};
      const MatD u = probe_direction(dk, int(x.rows()), int(x.cols()));
      const std::vector<Mat<R>> g = graph.vjp(stream[k + 1], u.cast<R>(), {stream[k]});
      sum += (g[0].template cast<double>() - u).squaredNorm();
    }
    out.block_identity_dev[k] = std::sqrt(sum / probes);
  }
}

}  // namespace

template <class R>
JacobianEstimates estimate_jacobians(CpuTape<R>& graph, const std::vector<Value>& stream, SampleKey key,
                                     int probes, JacobianWanted wanted) {
  JacobianEstimates out;
  if (probes <= 0) return out;
  if (wanted.stack) estimate_stack(graph, stream, key, probes, out);
  if (wanted.blocks) estimate_blocks(graph, stream, key, probes, out);
  return out;
}

template JacobianEstimates estimate_jacobians<float>(CpuTape<float>&, const std::vector<Value>&, SampleKey,
                                                     int, JacobianWanted);
template JacobianEstimates estimate_jacobians<double>(CpuTape<double>&, const std::vector<Value>&, SampleKey,
                                                      int, JacobianWanted);

}  // namespace normsim::sim
