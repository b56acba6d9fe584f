// Input-output Jacobian statistics estimated from random vector-Jacobian products (definitions:
// docs/metrics.md "Jacobians"), written once for every device (issue 31 item 1): which probes, their Philox
// streams, which reverse passes, and how the probes' squared norms become jac_sq, jac_spread and
// block_identity_dev. Reverse mode, because one reverse pass from x_K gives J_{K,l}^T u for every layer l at
// once, where forward tangents would need one pass per starting layer; J^T u and J v have the same
// statistics here, since every J is square (T d x T d) and E||J^T u||^2 = tr(J J^T)/n = tr(J^T J)/n for u
// uniform on the unit sphere of R^n. A device runs it on one sample (sim/cpu/cpu_jacobian_device.hpp) or on a
// batch of S samples (gpu/batch_jacobians.cpp).
//
// A Device supplies, for a forward pass whose streams x_0..x_K it has computed:
//   Direction, Sums            a probe direction of every sample; slots of S per-sample doubles;
//   rebuilds_tape              whether each reverse pass runs on a tape built for it (the device tape frees
//                              as it reverses: the pass consumes it) rather than on the forward pass's own;
//   samples(), entries()       S, and n = T d, the entries of one sample's stream;
//   direction(index, stream)   per sample, the Gaussian draw of Philox (seed, sample, index, stream) over
//                              its norm;
//   tangent(u)                 u as the tape's Buffer, where a reverse pass starts;
//   sums(slots)                `slots` slots;
//   squared_norm(g, sums, slot), squared_distance(g, u, sums, slot)
//                              ||g||^2, ||g - u||^2 of each sample into the slot;
//   host(sums)                 their values on the host, sample s of slot i at i S + s;
//   with_tape(from, to, pass)  pass(tape, stream, first) on a tape (sim/tape.hpp) whose forward holds
//                              x_from..x_to at stream[l - first], ready to reverse.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "sim/jacobian_wanted.hpp"
#include "sim/philox.hpp"
#include "sim/stack_ops.hpp"

namespace normsim::sim {

struct JacobianEstimates {
  std::vector<double> jac_sq;              // per stream l = 0..K: mean squared singular value of dx_K/dx_l
  std::vector<double> jac_spread;          // per stream: their relative variance (empty with one probe)
  std::vector<double> block_identity_dev;  // per sublayer k: ||dx_{k+1}/dx_k - I||_F / ||I||_F
};

// The probes' squared norms of S samples, as the reverse passes leave them; empty where not asked for.
struct JacobianSums {
  int depth = 0, probes = 0, samples = 0;
  double entries = 0;          // n = T d
  std::vector<double> stack;   // ||J_{K,l}^T u_p||^2 at ((l P) + p) S + s
  std::vector<double> blocks;  // ||(J_k - I)^T w_p||^2 at ((k P) + p) S + s

  // Sample s's estimates: each a mean over its P probes.
  JacobianEstimates of_sample(int s) const;
};

// From quadratic forms q_p = ||J^T u_p||^2 of P >= 2 unit probes u_p uniform on the sphere of R^n:
// (m2 - m1^2)/m1^2 with m_j the mean of sigma^(2j) over J's n singular values. Unbiased numerator:
// Var(q) = 2 (m2 - m1^2)/(n + 2) for such probes, so m2 - m1^2 = (n + 2)/2 * (sample variance of q).
double relative_spectral_variance(std::span<const double> q, double n);

// jac_sq and jac_spread at every layer: per probe p (stream jacobian_probe, index p) one reverse pass from
// x_K with u_p, ||J_{K,l}^T u_p||^2 of every stream l.
template <class Device>
std::vector<double> probe_stack(Device& dev, int depth, int probes) {
  typename Device::Sums sums = dev.sums(std::size_t(depth + 1) * probes);
  for (int p = 0; p < probes; ++p)
    dev.with_tape(0, depth, [&](auto& tape, const std::vector<Value>& stream, int) {
      const auto measure = [&](int l, const auto& g) {
        dev.squared_norm(g, sums, std::size_t(l) * probes + p);
      };
      tape.vjp(stream.back(), dev.tangent(dev.direction(std::uint32_t(p), Stream::jacobian_probe)), stream,
               measure, Device::rebuilds_tape);
    });
  return dev.host(sums);
}

// block_identity_dev: ||J_k - I||_F^2 / n = E||(J_k - I)^T w||^2 over unit w; per block k and probe p
// (stream block_probe, index k P + p) one short reverse pass from x_{k+1} with w down to x_k, earlier
// values held fixed: ||J_k^T w - w||^2.
template <class Device>
std::vector<double> probe_blocks(Device& dev, int depth, int probes) {
  typename Device::Sums sums = dev.sums(std::size_t(depth) * probes);
  for (int k = 0; k < depth; ++k)
    for (int p = 0; p < probes; ++p)
      dev.with_tape(k, k + 1, [&](auto& tape, const std::vector<Value>& stream, int first) {
        const std::size_t slot = std::size_t(k) * probes + p;
        const typename Device::Direction w = dev.direction(std::uint32_t(slot), Stream::block_probe);
        const auto measure = [&](int, const auto& g) { dev.squared_distance(g, w, sums, slot); };
        tape.vjp(stream[k + 1 - first], dev.tangent(w), {stream[k - first]}, measure, Device::rebuilds_tape);
      });
  return dev.host(sums);
}

// `probes` probe directions per statistic; about `probes` reverse passes for each of the two
// (docs/metrics.md), plus as many forward passes where the device rebuilds its tape.
template <class Device>
JacobianSums probe_jacobians(Device& dev, int depth, int probes, JacobianWanted wanted) {
  JacobianSums out{depth, probes, dev.samples(), dev.entries(), {}, {}};
  if (probes <= 0) return out;
  if (wanted.stack) out.stack = probe_stack(dev, depth, probes);
  if (wanted.blocks) out.blocks = probe_blocks(dev, depth, probes);
  return out;
}

}  // namespace normsim::sim
