// The Jacobian probes (sim/jacobian_probes.hpp) against finite differences in float64: the vector-Jacobian
// products themselves for several placements and sublayers, then the three estimates against the exact
// Jacobian of a tiny stack built column by column. Placements here carry no state across sublayers, so x_K
// is a function of x_l alone and can be re-run from a perturbed x_l.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <vector>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/cpu/cpu_jacobian_device.hpp"
#include "sim/inputs.hpp"
#include "sim/metrics.hpp"
#include "sim/run/key_relevance.hpp"
#include "sim/stack_build.hpp"

using namespace normsim::sim;
namespace vocab = normsim::vocab;

namespace {

Config tiny(vocab::Placement p, vocab::Sublayer s) {
  Config c;
  c.placement = p;
  c.sublayer = s;
  c.width = 8;
  c.tokens = 3;
  c.depth = 4;
  c.heads = 2;
  c.activation = vocab::Activation::gelu;  // smooth: no kink within a finite-difference step
  c.precision = normsim::vocab::Precision::float64;
  c.seed = 11;
  return c;
}

MatD input_of(const Config& c) {
  MatD x(c.tokens, c.width);
  for (int t = 0; t < c.tokens; ++t)
    for (int i = 0; i < c.width; ++i) x(t, i) = input_entry(c.seed, 0, t, i, c.width, 1.0, 0.2);
  return x;
}

// x_to from x_from: sublayers from..to-1 of sample 0 on a fresh tape.
MatD run_range(const Config& c, int from, int to, const MatD& x) {
  const StackShape shape(c);
  const Placement& p = find_placement(c.placement);
  CpuTape<double> g(shape, p, SampleKey{c.seed, 0});
  Value v = g.input(x);
  PlacementState state;
  for (int k = from; k < to; ++k) v = p.sublayer(g, shape, k, v, state);
  return g.value(v);
}

// The tape of sample 0, built as the CPU backend builds it.
struct RecordedStack {
  explicit RecordedStack(const Config& c)
      : shape(c),
        graph(shape, find_placement(c.placement), SampleKey{c.seed, 0}),
        sv(build_stack(graph, shape, find_placement(c.placement), graph.input(input_of(c)))) {}
  MatD x(int l) const { return graph.value(sv.stream[l]); }
  StackShape shape;
  CpuTape<double> graph;
  StackValues sv;
};

// d x_to / d x_from (n x n, n = T d, row-major flattening), by central differences column by column.
MatD jacobian_fd(const Config& c, int from, int to, const MatD& x) {
  const int n = int(x.size());
  constexpr double h = 1e-6;
  MatD J(n, n);
  for (int j = 0; j < n; ++j) {
    MatD plus = x, minus = x;
    plus.data()[j] += h, minus.data()[j] -= h;
    const MatD diff = (run_range(c, from, to, plus) - run_range(c, from, to, minus)) / (2 * h);
    for (int i = 0; i < n; ++i) J(i, j) = diff.data()[i];
  }
  return J;
}

DrawKey test_key(std::uint32_t layer) {
  return DrawKey{99, 0, layer, Stream::readout};
}

}  // namespace

// h = 1e-6: truncation O(h^2) and rounding O(1e-16/h) are both below 1e-8 on O(1) products; we allow 1e-6
// absolute + 1e-5 relative (as tests/sim/test_backward_fd.cpp).
TEST_CASE("vector-Jacobian products agree with central differences") {
  using P = vocab::Placement;
  using S = vocab::Sublayer;
  for (P p : {P::pre, P::post, P::peri, P::lnscale, P::deepnorm, P::hybridnorm, P::mix})
    for (S s : {S::mlp, S::attention, S::transformer}) {
      const Config c = tiny(p, s);
      RecordedStack tape(c);
      const int K = c.depth;
      const MatD u = probe_direction(test_key(1), c.tokens, c.width);
      const MatD v = probe_direction(test_key(2), c.tokens, c.width);
      constexpr double h = 1e-6;
      for (int l : {0, 2}) {  // d x_K / d x_l
        const MatD g = tape.graph.vjp(tape.sv.stream[K], u, {tape.sv.stream[l]})[0];
        const MatD jv =
            (run_range(c, l, K, tape.x(l) + h * v) - run_range(c, l, K, tape.x(l) - h * v)) / (2 * h);
        INFO("placement " << int(p) << " sublayer " << int(s) << " layer " << l);
        CHECK(g.cwiseProduct(v).sum() == Approx(u.cwiseProduct(jv).sum()).margin(1e-6).epsilon(1e-5));
      }
      for (int k : {0, K - 1}) {  // the block's own Jacobian d x_{k+1} / d x_k
        const MatD g = tape.graph.vjp(tape.sv.stream[k + 1], u, {tape.sv.stream[k]})[0];
        const MatD jv =
            (run_range(c, k, k + 1, tape.x(k) + h * v) - run_range(c, k, k + 1, tape.x(k) - h * v)) / (2 * h);
        INFO("placement " << int(p) << " sublayer " << int(s) << " block " << k);
        CHECK(g.cwiseProduct(v).sum() == Approx(u.cwiseProduct(jv).sum()).margin(1e-6).epsilon(1e-5));
      }
    }
}

TEST_CASE("a VJP leaves the weight-gradient norms of the loss's backward alone") {
  const Config c = tiny(vocab::Placement::pre, vocab::Sublayer::transformer);
  RecordedStack tape(c);
  const MatD dy = MatD::Ones(c.tokens, c.width);
  tape.graph.backward(tape.sv.output, dy);
  const auto before = tape.graph.device().gradw;
  tape.graph.vjp(tape.sv.stream[c.depth], probe_direction(test_key(3), c.tokens, c.width), tape.sv.stream);
  for (int k = 0; k < c.depth; ++k)
    for (int w = 0; w < kWeightKinds; ++w)
      if (!std::isnan(before[k][w])) CHECK(tape.graph.device().gradw[k][w] == before[k][w]);
}

namespace {

struct Spectrum {
  double m1, spread;  // mean sigma^2, (m2 - m1^2)/m1^2
};
Spectrum spectrum(const MatD& J) {
  const double n = double(J.rows());
  const double m1 = J.squaredNorm() / n, m2 = (J.transpose() * J).squaredNorm() / n;
  return {m1, m2 / (m1 * m1) - 1.0};
}

// Mean and standard error over replicates.
struct MeanSe {
  double mean, se;
};
MeanSe mean_se(const std::vector<double>& v) {
  double m = 0, ss = 0;
  for (double x : v) m += x / double(v.size());
  for (double x : v) ss += (x - m) * (x - m);
  return {m, std::sqrt(ss / double(v.size() - 1) / double(v.size()))};
}

}  // namespace

// The estimates of one sample are redrawn with other probe keys (the key's seed only picks the probes; the
// weights are the tape's), 40 replicates of 32 probes each. jac_sq and block_identity_dev^2 are unbiased,
// jac_spread is a ratio whose bias, ~3 Var(m1 estimate)/m1^2 = 6 spread/((n + 2) P) < 1% of it here, is far
// below its standard error: each is held to 4 standard errors measured over the replicates.
TEST_CASE("the Jacobian estimates converge to the exact Jacobian's spectrum") {
  using P = vocab::Placement;
  for (P p : {P::pre, P::post}) {
    const Config c = tiny(p, vocab::Sublayer::transformer);
    RecordedStack tape(c);
    const int K = c.depth, n = c.tokens * c.width, replicates = 40, probes = 32;
    std::vector<std::vector<double>> sq(K + 1), spread(K + 1), dev_sq(K);
    for (int r = 0; r < replicates; ++r) {
      const JacobianEstimates e =
          estimate_jacobians(tape.graph, tape.sv.stream, SampleKey{1000u + r, 0}, probes, {true, true});
      for (int l = 0; l <= K; ++l) sq[l].push_back(e.jac_sq[l]), spread[l].push_back(e.jac_spread[l]);
      for (int k = 0; k < K; ++k) dev_sq[k].push_back(e.block_identity_dev[k] * e.block_identity_dev[k]);
    }
    for (int l = 0; l < K; ++l) {
      const Spectrum exact = spectrum(jacobian_fd(c, l, K, tape.x(l)));
      const MeanSe s = mean_se(sq[l]), v = mean_se(spread[l]);
      INFO("placement " << int(p) << " layer " << l << ": jac_sq " << s.mean << " +- " << s.se << " vs "
                        << exact.m1 << ", jac_spread " << v.mean << " +- " << v.se << " vs " << exact.spread);
      CHECK(std::abs(s.mean - exact.m1) < 4 * s.se);
      CHECK(std::abs(v.mean - exact.spread) < 4 * v.se);
    }
    CHECK(mean_se(sq[K]).mean == Approx(1.0).epsilon(1e-12));  // d x_K / d x_K = I
    for (int k = 0; k < K; ++k) {
      const MatD J = jacobian_fd(c, k, k + 1, tape.x(k));
      const double exact = (J - MatD::Identity(n, n)).squaredNorm() / n;
      const MeanSe d = mean_se(dev_sq[k]);
      INFO("placement " << int(p) << " block " << k << ": dev^2 " << d.mean << " +- " << d.se << " vs "
                        << exact);
      CHECK(std::abs(d.mean - exact) < 4 * d.se);
    }
  }
}

TEST_CASE("the CPU backend records the Jacobian metrics only when asked") {
  Config c = tiny(vocab::Placement::pre, vocab::Sublayer::mlp);
  c.samples = 2;
  CpuBackend backend(1);
  const std::vector<int> samples{0, 1};
  const auto off = backend.run(c, samples);
  CHECK(std::isnan(off[0].values[metric_id("jac_sq")][0]));  // costly: not in the default `metrics`
  c.jacobian_probes = 4;
  for (const char* m : {"jac_sq", "jac_spread", "block_identity_dev"}) c.metrics.insert(metric_id(m));
  const auto on = backend.run(c, samples);
  CHECK(on[0].values[metric_id("jac_sq")][c.depth] == Approx(1.0));
  CHECK(on[1].values[metric_id("jac_spread")][0] > 0.0);
  CHECK(on[1].values[metric_id("block_identity_dev")][c.depth - 1] > 0.0);
  // The probes change nothing the loss's own backward records.
  CHECK(on[1].values[metric_id("gradw_w2")] == off[1].values[metric_id("gradw_w2")]);
  CHECK(on[1].values[metric_id("grad_sq")] == off[1].values[metric_id("grad_sq")]);
}

TEST_CASE("jacobian_probes is reported unused unless metrics names a Jacobian metric") {
  Config c = tiny(vocab::Placement::pre, vocab::Sublayer::mlp);
  CHECK(why_key_unused("jacobian_probes", c).find("no Jacobian metric") != std::string::npos);
  c.metrics.insert(metric::block_identity_dev);
  CHECK(why_key_unused("jacobian_probes", c).empty());
}
