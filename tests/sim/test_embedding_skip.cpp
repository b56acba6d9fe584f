// The embedding skip (`emb` in a block: the stack's input x_0 after the input norm, as in modded-nanogpt's
// and nanochat's x <- lambda x + lambda0 x0 at every block) on the CPU backend, where its special cases are
// exact: a zero skip adds exact zeros, and with zero output matrices every stream is a multiple of x_0.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/metric_set.hpp"
#include "sim/metrics.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;

namespace {

Config small_mlp() {
  Config c;
  c.placement = normsim::vocab::Placement::pre;
  c.depth = 6;
  c.width = 32;
  c.tokens = 4;
  c.seed = 11;
  return c;
}

bool same(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

}  // namespace

// modded-nanogpt starts its lambdas at (1, 0): x + 0 * emb adds exact zeros (x_0 is finite) and 1 * x is x,
// so every metric of every sample equals Pre-LN's to the last bit, backward included.
TEST_CASE("an embedding skip of weight 0 is Pre-LN, bit for bit") {
  Config pre = small_mlp();
  for (int m : {int(metric::jac_sq), int(metric::jac_spread), int(metric::block_identity_dev)})
    pre.metrics.insert(m);  // the Jacobians' reverse passes too
  Config skip = pre;
  skip.placement = normsim::vocab::Placement::custom;
  skip.block = "1 * x + 0 * emb + F(N(1 * x + 0 * emb))";
  const std::vector<int> samples{0, 1};
  const auto a = CpuBackend(1).run(pre, samples), b = CpuBackend(1).run(skip, samples);
  for (std::size_t s = 0; s < samples.size(); ++s)
    for (std::size_t m = 0; m < a[s].values.size(); ++m)
      for (std::size_t i = 0; i < a[s].values[m].size(); ++i) {
        INFO("sample " << s << " metric " << metric_table()[m].name << " layer " << i);
        CHECK(same(a[s].values[m][i], b[s].values[m][i]));
      }
}

// With every branch's output matrix zero (nanochat zeroes its c_proj at init) each branch adds 0, so
// x_{k+1} = lam x_k + mu x_0 exactly: x_k = a_k x_0 with a_0 = 1, a_{k+1} = lam a_k + mu, and
// act_sq(x_k) = a_k^2 act_sq(x_0). Float64: the recursion's rounding stays near 1e-15 relative.
TEST_CASE("an embedding skip over zero branches follows its scalar recursion") {
  Config c = small_mlp();
  c.placement = normsim::vocab::Placement::custom;
  c.block = "1.15 * x + 0.2 * emb + F(N(1.15 * x + 0.2 * emb))";
  c.init_w2 = "fixed:0";
  c.final_norm = normsim::vocab::FinalNorm::never;
  c.precision = normsim::vocab::Precision::float64;
  const auto r = CpuBackend(1).run(c, std::vector<int>{0})[0];
  const std::vector<double>& act = r.values[metric::act_sq];
  double a = 1.0;
  for (int k = 0; k <= c.depth; ++k) {
    INFO("layer " << k);
    CHECK(act[k] == Approx(a * a * act[0]).epsilon(1e-12));
    a = 1.15 * a + 0.2;
  }
}
