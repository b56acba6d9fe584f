// A block of n residual lanes in the simulator (docs/design/multistream.md 3.1, step S2): x_0 expanded into
// n copies of one Value, mixing by the tape's scale and add, the sum readout, stream[l] the lanes' mean, and
// the gradient of a Value several lanes share. Float64 on the CPU tape, where the identities are exact.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>

#include "meanfield_of/spec_from_config.hpp"
#include "sim/cpu/cpu_backend.hpp"
#include "sim/cpu/cpu_tape_device.hpp"
#include "sim/inputs.hpp"
#include "sim/metric_set.hpp"
#include "sim/metrics.hpp"
#include "sim/stack_build.hpp"
#include "taped_stack.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;
using normsim::test::input_of;
using normsim::test::readout_loss;
using normsim::test::TapedStack;
namespace vocab = normsim::vocab;

namespace {

// Static hyper-connections at their official init (lucidrains/hyper-connections hyper_connections.py
// @4775103 l.215, 229-232, 242): residual mixing I_n, branch input lane r = k mod n, beta = 1 on every lane.
std::string hc_official_init(int n) {
  std::string mix = "[", beta = "[", pick;
  for (int i = 0; i < n; ++i) {
    mix += std::string(i ? "," : "") + "[";
    for (int j = 0; j < n; ++j) mix += std::string(j ? "," : "") + (i == j ? "1" : "0");
    mix += "]";
    beta += std::string(i ? "," : "") + "1";
  }
  const std::string r = "k - " + std::to_string(n) + "*floor(k/" + std::to_string(n) + ")";
  for (int i = 0; i + 1 < n; ++i)
    pick += r + " < " + std::to_string(i + 1) + " ? x[" + std::to_string(i) + "] : ";
  pick += "x[" + std::to_string(n - 1) + "]";
  return mix + "] @ x + " + beta + "] * F(N(" + pick + "))";
}

Config small(const std::string& block, const std::string& sublayer = "mlp") {
  Config c;
  c.sublayer = vocab::parse<vocab::Sublayer>(sublayer);
  c.placement = block.empty() ? vocab::Placement::pre : vocab::Placement::custom;
  c.block = block;
  c.width = 12;
  c.heads = 3;
  c.tokens = 5;
  c.depth = 6;
  c.precision = vocab::Precision::float64;
  c.activation = vocab::Activation::gelu;
  c.seed = 7;
  return c;
}

}  // namespace

// HC at its official init keeps every lane equal to Pre-LN's x_l (modded-nanogpt PR #230: "starting off
// equivalent to pre-norm"): the identity mixing is lowered to no op and each lane adds the same F(N(x_l)),
// so the lanes are Pre-LN's streams bit for bit. The output is N(n x_K), Pre-LN's N(x_K) only as eps -> 0
// (design 4.6): with norm_eps 1e-5 and act_sq ~ 1 it differs by ~ eps (n^2 - 1) / (2 n^2 act_sq) < 1e-5
// relative, so 1e-5 is the bound, and the n = 2 mean (x + x) / 2 is x exactly.
TEST_CASE("hc_official_init_equals_preln") {
  for (const std::string sub : {"mlp", "transformer"})
    for (const int n : {2, 4}) {
      const Config hc = small(hc_official_init(n), sub), pre = small("", sub);
      INFO(sub << " n = " << n << ": " << hc.block);
      const Mat<double> x0 = input_of(pre);
      const TapedStack a(hc, x0), b(pre, x0);
      REQUIRE(a.p->lanes() == n);
      REQUIRE(a.sv.lanes.size() == std::size_t(hc.depth + 1));
      for (int l = 0; l <= hc.depth; ++l)
        for (int i = 0; i < n; ++i)
          CHECK((a.at(a.sv.lanes[l][std::size_t(i)]).array() == b.at(b.sv.stream[l]).array()).all());
      if (n == 2)
        for (int l = 0; l <= hc.depth; ++l)
          CHECK((a.at(a.sv.stream[l]).array() == b.at(b.sv.stream[l]).array()).all());
      CHECK((a.at(a.sv.output) - b.at(b.sv.output)).cwiseAbs().maxCoeff() < 1e-5);
    }
}

// The lucidrains issue-8 regression (fixed in 215116f): width_connection returned the lanes before mixing,
// invisible at HC's identity init. Here the mixing swaps the lanes: lane 1 of x_{k+1} must be lane 0 of x_k
// (a copy of its Value: every lane is a Value of its own), and lane 0 of x_{k+1} is x_k's lane 1 plus the
// branch of lane 0.
TEST_CASE("lane_permutation_mixes") {
  const Config c = small("[[0,1],[1,0]] @ x + [1,0] * F(N(x[0]))");
  const TapedStack a(c, input_of(c));
  for (int l = 0; l < c.depth; ++l) {
    const Lanes& now = a.sv.lanes[std::size_t(l)];
    const Lanes& next = a.sv.lanes[std::size_t(l + 1)];
    CHECK(next[1].id != now[0].id);
    CHECK((a.at(next[1]).array() == a.at(now[0]).array()).all());
    if (l > 0) CHECK_FALSE((a.at(next[1]).array() == a.at(now[1]).array()).all());  // mixed, not kept
    CHECK_FALSE((a.at(next[0]).array() == a.at(now[1]).array()).all());             // the branch was added
  }
  // the readout is the lanes' sum, and stream[l] their mean
  const Lanes& last = a.sv.lanes.back();
  const Mat<double> sum = a.at(last[0]) + a.at(last[1]);
  CHECK((a.at(a.sv.stream.back()) - 0.5 * sum).cwiseAbs().maxCoeff() == 0.0);
}

// x_0's lanes are copies of it, so its gradient sums the lanes' (the tape's scale and add pass it back):
// dLoss/dx_0 against central finite differences through a mixing that weighs the lanes unequally. h = 1e-6:
// truncation O(h^2) and rounding O(1e-16/h) are below 1e-9 on O(1) gradients; 1e-6 + 1e-5 relative, as
// tests/sim/test_backward_fd.cpp.
TEST_CASE("shared_value_gradient") {
  for (const std::string sub : {"mlp", "attention"}) {
    Config c = small("[[1,0.5],[0.25,1]] @ x + [1,0.5] * F(N([0.5,0.5] @ x)) + [0.3,-0.2] * emb", sub);
    c.depth = 3;
    c.tokens = 3;
    c.width = 6;
    const Mat<double> x0 = input_of(c);
    TapedStack a(c, x0);
    Mat<double> dy;
    readout_loss(c, a.at(a.sv.output), &dy);
    a.g.backward(a.sv.output, dy);
    const Mat<double> grad = a.g.grad(a.input);
    const double h = 1e-6;
    for (int t = 0; t < c.tokens; ++t)
      for (int i = 0; i < c.width; ++i) {
        Mat<double> xp = x0, xm = x0;
        xp(t, i) += h, xm(t, i) -= h;
        const TapedStack p(c, xp), m(c, xm);
        const double fd = (readout_loss(c, p.at(p.sv.output)) - readout_loss(c, m.at(m.sv.output))) / (2 * h);
        INFO(sub << " entry " << t << "," << i);
        CHECK(grad(t, i) == Approx(fd).margin(1e-6).epsilon(1e-5));
      }
  }
}

// modded-nanogpt's embedding skip starts at [1, 0] (train_gpt.py @5db4da38 l.211-214): every lane adds
// 0 * emb, exact zeros, so with HC's init the lanes stay Pre-LN's streams bit for bit.
TEST_CASE("emb_skip_zero_is_preln") {
  const Config skip = small("[[1,0],[0,1]] @ x + [1,1] * (0 * emb) + [1,1] * F(N(x[0] + 0 * emb))");
  const Config pre = small("");
  const Mat<double> x0 = input_of(pre);
  const TapedStack a(skip, x0), b(pre, x0);
  for (int l = 0; l <= pre.depth; ++l)
    for (int i = 0; i < 2; ++i)
      CHECK((a.at(a.sv.lanes[l][std::size_t(i)]).array() == b.at(b.sv.stream[l]).array()).all());
  // Through the backends: every per-layer stream metric as Pre-LN's, the gradient within eps (above).
  const auto r = CpuBackend(1).run(skip, std::vector<int>{0, 1}),
             q = CpuBackend(1).run(pre, std::vector<int>{0, 1});
  for (std::size_t s = 0; s < r.size(); ++s)
    for (const int m :
         {int(metric::act_sq), int(metric::token_cos), int(metric::cos_next), int(metric::grad_sq)})
      for (std::size_t l = 0; l < q[s].values[std::size_t(m)].size(); ++l) {
        INFO("sample " << s << " metric " << metric_table()[std::size_t(m)].name << " layer " << l);
        CHECK(r[s].values[std::size_t(m)][l] == Approx(q[s].values[std::size_t(m)][l]).epsilon(1e-5));
      }
}

// Admin is code of one stream (its omega is measured per sublayer): given lanes it refuses. A block of lanes
// has a mean field (step S4, theory/placements/lanes.cpp) but is built whole, never in segments.
TEST_CASE("admin_refuses_lanes") {
  const Placement& admin = find_placement(vocab::Placement::admin);
  CHECK(admin.lanes() == 1);
  const Config c = small("");
  const StackShape shape(c);
  CpuTape<double> g(shape, admin, SampleKey{c.seed, 0});
  const Value x = g.input(input_of(c));
  PlacementState state;
  CHECK_THROWS_WITH(admin.sublayer_lanes(g, shape, 0, Lanes{x, x}, state),
                    Catch::Contains("'admin' carries one stream, not 2 lanes"));
  CHECK(admin.sublayer_lanes(g, shape, 0, Lanes{x}, state).size() == 1);
  const Config hc = small(hc_official_init(2));
  CHECK_NOTHROW(normsim::meanfield_of::to_stack_spec(hc));
  PlacementState s2;
  const std::shared_ptr<const Placement> p = placement_for(hc);
  CHECK_THROWS_WITH(build_segment(g, shape, *p, x, 0, 2, s2), Catch::Contains("built whole"));
}
