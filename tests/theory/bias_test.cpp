// An MLP branch with biases (Branch::biased, docs/theory_notes.md "Biases"): its output Gram and backward
// gain against a fixed-seed Monte Carlo of one hidden unit, h_t = sqrt(sigma_1^2 m) z_t + b with (z_t, z_s)
// of cosine rho and b ~ N(0, sigma_b^2) shared by the two tokens (tolerance: mc_helpers.hpp's 5 se), and
// sigma_b^2 = 0 giving the bias-free branch bit for bit.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "mc_helpers.hpp"
#include "theory/branch_model.hpp"

using namespace normsim::theory;
using test::Estimate;

namespace {

// E f(h_t, h_s, b) over the pair above (and its bias b, for SwiGLU's second projection), 4e5 draws.
template <class F>
Estimate pair_expectation(F f, double weighted, double rho, double sb, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int n = 400000;
  double sum = 0.0, sum_sq = 0.0;
  for (int i = 0; i < n; ++i) {
    const double x = normal(rng), y = normal(rng), b = std::sqrt(sb) * normal(rng);
    const double zt = x, zs = rho * x + std::sqrt(1.0 - rho * rho) * y;
    const double v = f(std::sqrt(weighted) * zt + b, std::sqrt(weighted) * zs + b);
    sum += v, sum_sq += v * v;
  }
  const double mean = sum / n;
  return {mean, std::sqrt(std::max((sum_sq - n * mean * mean) / (n - 1), 0.0) / n)};
}

}  // namespace

TEST_CASE("a biased MLP branch: output Gram and backward gain against Monte Carlo", "[theory][bias]") {
  const double s1 = 2.0, s2 = 1.5, sb = 0.4, m = 0.8, rho = 0.3;
  for (const Activation act : {Activation::gelu, Activation::tanh, Activation::relu}) {
    const Branch::Eval e = Branch::mlp(act, s1, s2, 1.0).biased(sb).evaluate({m, m * rho});
    const auto phi = [act](double h) { return activate(act, h); };
    const auto dphi = [act](double h) { return activate_derivative(act, h); };
    const Estimate diag =
        pair_expectation([&](double ht, double) { return phi(ht) * phi(ht); }, s1 * m, rho, sb, 1);
    const Estimate off =
        pair_expectation([&](double ht, double hs) { return phi(ht) * phi(hs); }, s1 * m, rho, sb, 2);
    const Estimate d2 =
        pair_expectation([&](double ht, double) { return dphi(ht) * dphi(ht); }, s1 * m, rho, sb, 3);
    INFO(static_cast<int>(act));
    CHECK(std::abs(e.out.diag - (s2 * diag.mean + sb)) <= test::kSigmas * s2 * diag.se);
    CHECK(std::abs(e.out.off - (s2 * off.mean + sb)) <= test::kSigmas * s2 * off.se);
    CHECK(std::abs(e.back({1.0, 0.0}).diag - s1 * s2 * d2.mean) <= test::kSigmas * s1 * s2 * d2.se);
  }
}

TEST_CASE("a zero bias is the bias-free branch bit for bit", "[theory][bias]") {
  for (const Activation act : {Activation::relu, Activation::gelu, Activation::swiglu}) {
    const Branch plain = Branch::mlp(act, 2.0, 1.5, 1.2), zero = plain.biased(0.0);
    const TokenGram in{0.8, 0.24};
    const Branch::Eval a = plain.evaluate(in), b = zero.evaluate(in);
    CHECK(a.out.diag == b.out.diag);
    CHECK(a.out.off == b.out.off);
    CHECK(a.back(in).off == b.back(in).off);
    CHECK(plain.tangent(in, a).moved.off == zero.tangent(in, b).moved.off);
  }
  CHECK_THROWS(Branch::attention_value_norm(1.0, 1.0, AttentionMixing::uniform(4, false)).biased(0.1));
  CHECK_THROWS(Branch::attention(1.0, AttentionMixing::uniform(4, false)).gated(1.0).biased(0.1));
}

// Uniform attention: the value bias passes P (rows summing to 1) and W_O, b_O adds its own: the output Gram
// gains sigma_o^2 sigma_b^2 + sigma_b^2 on the diagonal and across tokens; the backward map is unchanged.
TEST_CASE("a biased attention branch adds sigma_o^2 sigma_b^2 + sigma_b^2 to its output Gram",
          "[theory][bias]") {
  for (const bool causal : {false, true}) {
    const Branch plain = Branch::attention(1.5 * 0.8, AttentionMixing::uniform(6, causal));
    const Branch biased = plain.biased(0.3, 0.8);
    const TokenGram in{0.9, 0.2}, grad{0.7, 0.1};
    const Branch::Eval a = plain.evaluate(in), b = biased.evaluate(in);
    CHECK(b.out.diag - a.out.diag == Approx(0.8 * 0.3 + 0.3));
    CHECK(b.out.off - a.out.off == Approx(0.8 * 0.3 + 0.3));
    CHECK(b.back(grad).diag == a.back(grad).diag);
    CHECK(b.back(grad).off == a.back(grad).off);
    // The random update's change: b_V's move through W_O beside the bias-free terms at the biased output.
    CHECK(biased.tangent(in, b).moved.diag - plain.tangent(in, a).moved.diag ==
          Approx(2 * (0.8 * 0.3) + 0.3));
  }
}
