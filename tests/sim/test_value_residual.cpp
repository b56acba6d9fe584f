// ResFormer's value residual (`Fv(u, lam)`, sim/value_residual.hpp) on the CPU tape: lam = 0 is plain
// attention to the last bit, and dLoss/dx_0 through the mixed values (the tape's edge from every mixing
// branch back into V_1's source) agrees with finite differences.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "same_records.hpp"
#include "sim/cpu/cpu_backend.hpp"
#include "sim/cpu/cpu_tape_device.hpp"
#include "sim/metric_set.hpp"
#include "sim/metrics.hpp"
#include "sim/stack_build.hpp"
#include "taped_stack.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;
namespace vocab = normsim::vocab;
using normsim::test::input_of;
using normsim::test::readout_loss;
using normsim::test::TapedStack;

namespace {

Config small(const std::string& block, vocab::Sublayer sublayer) {
  Config c;
  c.sublayer = sublayer;
  c.placement = vocab::Placement::custom;
  c.block = block;
  c.width = 12;
  c.heads = 3;
  c.tokens = 5;
  c.depth = 6;
  c.activation = vocab::Activation::gelu;
  c.seed = 5;
  return c;
}

}  // namespace

// lam = 0: V <- 1 * V + 0 * V_1 and dLoss/dV_1 = 0 * dLoss/dV add exact zeros (V_1 is finite), and V_1's
// source is plain attention; so every metric of every sample, the Jacobians' reverse passes included, equals
// the block with F, bit for bit, in float32 and float64, on attention and transformer stacks, causal or not.
TEST_CASE("fv_zero_is_attention") {
  for (const auto sublayer : {vocab::Sublayer::attention, vocab::Sublayer::transformer})
    for (const auto precision : {vocab::Precision::float32, vocab::Precision::float64})
      for (const bool causal : {false, true}) {
        Config plain = small("x + F(N(x))", sublayer);
        plain.precision = precision;
        plain.causal = causal;
        for (int m : {int(metric::jac_sq), int(metric::jac_spread)}) plain.metrics.insert(m);
        Config mixed = plain;
        mixed.block = "x + Fv(N(x), 0)";
        const std::vector<int> samples{0, 1};
        INFO(vocab::name(sublayer) << " causal " << causal << " " << vocab::name(precision));
        CHECK(normsim::test::same_records(CpuBackend(1).run(plain, samples),
                                          CpuBackend(1).run(mixed, samples)));
      }
}

// lam = 0.5 does change the numbers (the mixing is applied): the second attention's branch_sq differs.
TEST_CASE("fv_mixes_the_values") {
  const Config plain = small("x + F(N(x))", vocab::Sublayer::attention);
  Config mixed = plain;
  mixed.block = "x + Fv(N(x), 0.5)";
  const auto a = CpuBackend(1).run(plain, std::vector<int>{0}),
             b = CpuBackend(1).run(mixed, std::vector<int>{0});
  const auto& pa = a[0].values[metric::branch_sq];
  const auto& pb = b[0].values[metric::branch_sq];
  CHECK(pa[0] == pb[0]);  // V_1's source is plain attention
  for (std::size_t k = 1; k < pa.size(); ++k) CHECK(pa[k] != pb[k]);
}

// dLoss/dx_0 against central finite differences, with mixing weights that vary with the layer and an MLP
// between the attentions (transformer): x_0 reaches the loss through the stream and, through V_1, through
// every mixing attention, whose edge the tape sends back into V_1's source. Float64; h = 1e-6: truncation
// O(h^2) and rounding O(1e-16 / h) stay below 1e-9 on O(1) gradients, so 1e-6 + 1e-5 relative, as
// tests/sim/test_backward_fd.cpp. The edge carries a gradient of its own (dLoss/dV_1, the tape's gradient
// at the `values` op): measured 0.93 here; 0.1 only asks that it is there.
TEST_CASE("fv_grad_reaches_layer0") {
  for (const auto sublayer : {vocab::Sublayer::attention, vocab::Sublayer::transformer}) {
    Config c = small("x + Fv(N(x), 0.3 + 0.1 * k)", sublayer);
    c.depth = 4;
    c.tokens = 3;
    c.width = 6;
    c.causal = true;
    c.precision = vocab::Precision::float64;
    const Mat<double> x0 = input_of(c);
    TapedStack a(c, x0);
    Mat<double> dy;
    readout_loss(c, a.g.value(a.sv.output), &dy);
    a.g.backward(a.sv.output, dy);
    const Mat<double> grad = a.g.grad(a.input);
    REQUIRE(a.state.first_values.valid());
    const double edge = a.g.grad(a.state.first_values).norm();
    INFO("||dLoss/dV_1|| = " << edge);
    CHECK(edge > 0.1);
    const double h = 1e-6;
    for (int t = 0; t < c.tokens; ++t)
      for (int i = 0; i < c.width; ++i) {
        Mat<double> xp = x0, xm = x0;
        xp(t, i) += h, xm(t, i) -= h;
        const TapedStack p(c, xp), m(c, xm);
        const double fd =
            (readout_loss(c, p.g.value(p.sv.output)) - readout_loss(c, m.g.value(m.sv.output))) / (2 * h);
        INFO(vocab::name(sublayer) << " entry " << t << "," << i);
        CHECK(grad(t, i) == Approx(fd).margin(1e-6).epsilon(1e-5));
      }
  }
}

// Fv needs V_1 on the tape it runs on: a segment that starts past the first sublayer is refused.
TEST_CASE("fv_segment_refused") {
  const Config c = small("x + Fv(N(x), 0.5)", vocab::Sublayer::attention);
  const StackShape shape(c);
  const auto p = placement_for(c);
  CpuTape<double> g(shape, *p, SampleKey{c.seed, 0});
  PlacementState state;
  const Value x = g.input(input_of(c));
  CHECK_THROWS_WITH(build_segment(g, shape, *p, x, 2, c.depth, state), Catch::Contains("V_1"));
}
