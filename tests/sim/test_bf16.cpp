// precision = "bf16" (sim/bf16.hpp): the rounding itself, a stack in bf16 against the same stack in float32,
// thread-count independence, the configurations it refuses, and the mean field, which has no precision.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "meanfield_of/theory_overlay.hpp"
#include "sim/bf16.hpp"
#include "sim/cpu/cpu_backend.hpp"
#include "sim/philox.hpp"
#include "sim/sample_metrics.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;
namespace vocab = normsim::vocab;

namespace {

float from_bits(std::uint32_t u) {
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}
std::uint32_t bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return u;
}

// The nearest value with 8 significant bits, ties to even, by arithmetic rather than bits: x scaled so its
// ulp in bf16 is 1, rounded by nearbyint (the default mode, ties to even), scaled back, all exact in double.
// bf16's ulp is 2^(e - 7) for x in [2^e, 2^(e+1)), and 2^-133 (float32's subnormal boundary's) below 2^-126.
float reference_bf16(float x) {
  int e = 0;
  std::frexp(double(x), &e);  // |x| in [2^(e-1), 2^e)
  const int ulp_exp = std::max(e - 1 - 7, -126 - 7);
  const double r = std::ldexp(std::nearbyint(std::ldexp(double(x), -ulp_exp)), ulp_exp);
  return r > double(std::numeric_limits<float>::max()) || r < -double(std::numeric_limits<float>::max())
             ? std::copysign(std::numeric_limits<float>::infinity(), x)
             : float(r);
}

}  // namespace

TEST_CASE("round_to_bf16: ties to even, NaN, infinities, subnormals, overflow", "[bf16]") {
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: to the even 1; 1 + 3 2^-8 halfway to the even 1 + 2^-6.
  CHECK(bits(round_to_bf16(from_bits(0x3F80'8000u))) == 0x3F80'0000u);
  CHECK(bits(round_to_bf16(from_bits(0x3F81'8000u))) == 0x3F82'0000u);
  CHECK(bits(round_to_bf16(from_bits(0x3F80'8001u))) == 0x3F81'0000u);  // past halfway: up
  CHECK(bits(round_to_bf16(from_bits(0xBF80'7FFFu))) == 0xBF80'0000u);  // short of it: down, sign kept
  // Subnormals: half the smallest bf16 subnormal (2^-133) ties to 0, 3/2 of it to 2 of it (even).
  CHECK(bits(round_to_bf16(from_bits(0x0000'8000u))) == 0x0000'0000u);
  CHECK(bits(round_to_bf16(from_bits(0x0001'8000u))) == 0x0002'0000u);
  CHECK(bits(round_to_bf16(from_bits(0x807F'FFFFu))) == 0x8080'0000u);  // the largest subnormal: to 2^-126
  CHECK(bits(round_to_bf16(-0.0f)) == 0x8000'0000u);
  // Past bf16's largest finite value (0x7F7F): an infinity; infinities stay.
  CHECK(bits(round_to_bf16(std::numeric_limits<float>::max())) == 0x7F80'0000u);
  CHECK(bits(round_to_bf16(from_bits(0x7F7F'7FFFu))) == 0x7F7F'0000u);
  CHECK(bits(round_to_bf16(-std::numeric_limits<float>::infinity())) == 0xFF80'0000u);
  // NaN stays NaN whatever its payload (0x7F80'0001 would carry into an infinity), quieted, sign kept.
  for (const std::uint32_t nan : {0x7F80'0001u, 0x7FBF'FFFFu, 0x7FFF'FFFFu, 0xFF80'0001u}) {
    const float r = round_to_bf16(from_bits(nan));
    CHECK(std::isnan(r));
    CHECK((bits(r) & 0xFFFFu) == 0u);
    CHECK((bits(r) >> 31) == (nan >> 31));
  }
  // Every finite float in a Philox stream of bit patterns against the arithmetic reference.
  int checked = 0;
  for (std::uint32_t i = 0; i < 100000; ++i) {
    const float x = from_bits(philox4x32_10(Philox4{{i, 0, 0, 0}}, 7, 11).v[0]);
    if (!std::isfinite(x)) continue;
    REQUIRE(bits(round_to_bf16(x)) == bits(reference_bf16(x)));
    ++checked;
  }
  CHECK(checked > 99000);
}

namespace {

// A Pre-LN MLP stack of W1's kind, small enough for seconds.
Config mlp_stack(vocab::Precision precision, vocab::Activation act) {
  Config c;
  c.placement = vocab::Placement::pre;
  c.activation = act;
  c.width = 128, c.tokens = 16, c.depth = 8, c.samples = 4, c.precision = precision;
  return c;
}

double relative_distance(const MatD& a, const MatD& b) {
  return (a - b).norm() / b.norm();
}

}  // namespace

// Bound on the bf16 stack's distance from the float32 one, e_l = ||x_bf16 - x_f32||_F / ||x_f32||_F, at
// every stream x_l, and for the gradient at x_0. A rounding to bf16 moves a value by at most u |v| (u = 2^-8)
// and, its error spread over the half-ulp interval, by an rms of at most u / sqrt(3). The MLP's path meets at
// most 8 roundings (u, W1, h, act(h), W2 and the output; SwiGLU's gate and product two more, u read once per
// product), each carried to the branch output with gain about 1 (fan-in init keeps the rms through a
// product), so branch l moves by an rms of c u ||b_l||, c = sqrt(8 / 3) = 1.63. In Pre-LN at init a
// deviation of x_l grows through the later sublayers as the stream itself does (their Jacobians are I plus a
// branch's, which scales as the stream's rms), so its relative size is kept, and the branches' independent
// roundings add in quadrature: e_l^2 = c^2 u^2 sum_{j<=l} ||b_j||^2 / ||x_j||^2 = c^2 u^2 sum_{j<=l} 1/(j+1)
// with every branch about x_0's size (Pre-LN's mean field, q_j = (j + 1) q_0). The test allows twice that:
// the gains taken as 1 (GELU's slope reaches 1.13, SwiGLU multiplies two products) and the estimate's own
// spread over 16 x 128 entries (relative sd 1/45). The backward meets as many roundings (dout, da, the
// activation's derivative, du) over the same sum, so the gradient at x_0 has the bound of x_K. ReLU's
// gradient also sees its mask flip where a rounding moves h across 0: for h ~ N(0, s^2) a fraction
// p = 2 phi(0) c u = 1.3 u of a layer's entries, each changing dh by its whole da, a relative rms of
// sqrt(2 p) per layer, added in quadrature as above: sqrt(2.6 u sum_j 1/(j+1)) more.
// Below, the output's rounding alone moves a branch by an rms of at least 0.42 u (mantissas log-uniform:
// u / sqrt(3) sqrt(E[1/m^2]) = 0.735 u / sqrt(3)), and x_1 = x_0 + b_1 carries half of it: e >= 0.3 u. The
// test asks e >= u / 8 everywhere: bf16 really rounds.
TEST_CASE("a bf16 stack stays within bf16's rounding of the float32 stack", "[bf16]") {
  const double u = std::ldexp(1.0, -8), c = std::sqrt(8.0 / 3.0);
  for (const auto act : {vocab::Activation::relu, vocab::Activation::gelu, vocab::Activation::swiglu}) {
    const Config f32 = mlp_stack(vocab::Precision::float32, act), bf = mlp_stack(vocab::Precision::bf16, act);
    for (int sample = 0; sample < f32.samples; ++sample) {
      const SampleTensors a = simulate_sample_cpu<float>(bf, sample),
                          b = simulate_sample_cpu<float>(f32, sample);
      REQUIRE(a.stream.size() == b.stream.size());
      REQUIRE(a.grad.size() == b.grad.size());
      CHECK(relative_distance(a.stream[0], b.stream[0]) == 0.0);  // the input is float32 in both
      double layers = 0;                                          // sum_{j<=l} 1/(j+1)
      for (std::size_t l = 1; l < a.stream.size(); ++l) {
        layers += 1.0 / double(l + 1);
        const double e = relative_distance(a.stream[l], b.stream[l]);
        INFO("activation " << vocab::name(act) << " sample " << sample << " layer " << l
                           << ": e/u = " << e / u);
        CHECK(e >= u / 8);
        CHECK(e <= 2 * c * u * std::sqrt(layers));
      }
      const double eg = relative_distance(a.grad[0], b.grad[0]);
      const double mask_flips = act == vocab::Activation::relu ? std::sqrt(2.6 * u * layers) : 0.0;
      INFO("activation " << vocab::name(act) << " sample " << sample << " gradient at x_0: e/u = " << eg / u);
      CHECK(eg >= u / 8);
      CHECK(eg <= 2 * c * u * std::sqrt(layers) + mask_flips);
    }
  }
}

// The rounding points sit inside the products' column blocks, which depend on the shapes alone
// (sim/cpu/cpu_parallel.hpp): 1, 2 and 3 threads give the same bits, with biases and an Adam step (the
// rounded bias, the weights rounded after the update) and a width that splits the products into several
// blocks.
TEST_CASE("bf16 records are identical for 1, 2 and 3 threads", "[bf16][threads]") {
  Config c = mlp_stack(vocab::Precision::bf16, vocab::Activation::gelu);
  c.width = 320, c.depth = 4, c.samples = 3, c.bias = true, c.init_bias = 0.3;
  c.update = vocab::Update::adam;
  const std::vector<int> samples{0, 1, 2};
  const auto one = CpuBackend(1).run(c, samples);
  for (const int threads : {2, 3}) {
    const auto more = CpuBackend(threads).run(c, samples);
    for (std::size_t s = 0; s < one.size(); ++s)
      for (std::size_t m = 0; m < one[s].values.size(); ++m)
        for (std::size_t l = 0; l < one[s].values[m].size(); ++l) {
          const double a = one[s].values[m][l], b = more[s].values[m][l];
          REQUIRE(std::memcmp(&a, &b, sizeof a) == 0);
        }
  }
}

TEST_CASE("bf16 refuses the sublayers whose products it does not emulate", "[bf16]") {
  Config c = mlp_stack(vocab::Precision::bf16, vocab::Activation::gelu);
  CHECK(bf16_refusal(c).empty());
  CHECK(CpuBackend(1).refusal(c, 1).empty());
  c.sublayer = vocab::Sublayer::transformer;
  CHECK_THAT(CpuBackend(1).refusal(c, 1), Catch::Contains("key 'precision'") && Catch::Contains("attends"));
  c.sublayer = vocab::Sublayer::mlp;
  c.moe_experts = 4;
  CHECK_THAT(bf16_refusal(c), Catch::Contains("moe_experts"));
  c.precision = vocab::Precision::float32;
  CHECK(bf16_refusal(c).empty());
}

// The mean field has no precision: a bf16 configuration gets float32's prediction, value for value.
TEST_CASE("the mean field of a bf16 configuration is float32's", "[bf16]") {
  Grid g32, g16;
  g32.configs = {mlp_stack(vocab::Precision::float32, vocab::Activation::gelu)};
  g16.configs = {mlp_stack(vocab::Precision::bf16, vocab::Activation::gelu)};
  const auto a = normsim::meanfield_of::theory_values(g32), b = normsim::meanfield_of::theory_values(g16);
  REQUIRE(a.size() > 10);
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].metric == b[i].metric);
    CHECK(a[i].index == b[i].index);
    CHECK(a[i].value == b[i].value);
  }
}
