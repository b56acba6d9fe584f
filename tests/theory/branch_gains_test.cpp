// Branch gains: theory.md §1.1/§1.2's printed numbers, the gain^2 convention against sampled weight
// matrices, and the SwiGLU moments against Monte Carlo.
#include "theory/branch_gains.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "mc_helpers.hpp"
#include "theory/activation.hpp"
#include "theory/summaries.hpp"

using namespace normsim::theory;
using normsim::theory::test::Estimate;
using normsim::theory::test::kSigmas;
using normsim::theory::test::monte_carlo;

TEST_CASE("SwiGLU gains per unit sigma2^2 match theory.md §1.1") {
  struct Row {
    double s, q, chi;
  };
  for (const Row& r : {Row{0.25, 0.018062, 0.036832}, Row{0.5, 0.079288, 0.162965},
                       Row{1.0, 0.355776, 0.735258}, Row{2.0, 1.598306, 3.305797}}) {
    const BranchGains g = swiglu_gains(r.s, r.s, 1.0);
    CHECK(std::abs(g.q - r.q) <= 5e-7);
    CHECK(std::abs(g.chi - r.chi) <= 5e-7);
    CHECK(g.chi / g.q > 2.0);  // "chi/q ~ 2.04-2.07": the branch is ~ degree-2 homogeneous
    CHECK(g.chi / g.q < 2.08);
  }
  const BranchGains g4 = swiglu_gains(0.4, 0.4, 1.0);
  CHECK(std::abs(g4.q - 0.04910) <= 5e-6);
  CHECK(std::abs(g4.chi - 0.10067) <= 5e-6);
}

TEST_CASE("Post-LN per-sublayer gains printed in theory.md §2.1 P4 and §5") {
  const BranchGains relu = mlp_gains(Activation::relu, 1.0, 1.0);
  CHECK(relu.q == Approx(0.5));
  CHECK(relu.chi == Approx(0.5));  // chi = q for ReLU
  CHECK(postln_gain_sq(relu.q, relu.chi) == Approx(1.0));
  const BranchGains gelu = mlp_gains(Activation::gelu, 1.0, 1.0);
  CHECK(std::abs(postln_gain_sq(gelu.q, gelu.chi) - 1.0215) < 5e-5);
  CHECK(std::abs(std::log(postln_gain_sq(gelu.q, gelu.chi)) - 0.0213) < 5e-5);
  const BranchGains xavier = mlp_gains(Activation::gelu, 0.4, 1.6);
  CHECK(std::abs(postln_gain_sq(xavier.q, xavier.chi) - 1.0137) < 5e-5);
  CHECK(std::abs(xavier.q - 0.2329) < 5e-5);  // §3(a) slope table
  CHECK(std::abs(mlp_gains(Activation::relu, 0.4, 1.6).q - 0.32) < 1e-12);
  const BranchGains swiglu = mlp_gains(Activation::swiglu, 1.0, 1.0);
  CHECK(std::abs(postln_gain_sq(swiglu.q, swiglu.chi) - 1.2799) < 5e-5);
  CHECK(std::abs(std::log(postln_gain_sq(swiglu.q, swiglu.chi)) - 0.2468) < 5e-5);
  // Uniform attention (§1.2): q = sigma_A^2 c_x, chi = sigma_A^2 c_g.
  const BranchGains att = attention_gains(1.0, uniform_coherence(0.0, 64), 1.0 / 64);
  CHECK(att.q == Approx(1.0 / 64));
  CHECK(att.chi == Approx(1.0 / 64));
}

TEST_CASE("SwiGLU moments agree with fixed-seed Monte Carlo within 5 standard errors") {
  // q/s2 = E[silu(a)^2 b^2], chi/s2 = sg E[silu'(a)^2 b^2] + s1 E[silu(a)^2]; a ~ N(0, sg), b ~ N(0, s1).
  const double sg = 0.7, s1 = 1.3;
  const BranchGains g = swiglu_gains(sg, s1, 1.0);
  auto silu = [](double z) { return activate(Activation::silu, z); };
  auto dsilu = [](double z) { return activate_derivative(Activation::silu, z); };
  const Estimate q = monte_carlo(
      [&](double x, double y) { return std::pow(silu(std::sqrt(sg) * x) * std::sqrt(s1) * y, 2); }, 200000,
      7);
  const Estimate chi = monte_carlo(
      [&](double x, double y) {
        return sg * std::pow(dsilu(std::sqrt(sg) * x) * std::sqrt(s1) * y, 2) +
               s1 * std::pow(silu(std::sqrt(sg) * x), 2);
      },
      200000, 8);
  CHECK(std::abs(g.q - q.mean) <= kSigmas * q.se);
  CHECK(std::abs(g.chi - chi.mean) <= kSigmas * chi.se);
}

TEST_CASE("gain^2 = fan_in Var(W): q and chi of a sampled GELU MLP within 5 standard errors") {
  // One draw of W1 (d x f), W2 (f x d) and a normalized input u gives ||F(u)||^2/d and, for a random
  // g, ||J^T g||^2/||g||^2; both are O(1/sqrt(d)) noisy, so average over draws and use their spread.
  const int d = 64, f = 256, draws = 60;
  const double s1 = 0.4, s2 = 1.6;
  std::mt19937_64 rng(99);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<double> qs, chis;
  for (int r = 0; r < draws; ++r) {
    std::vector<double> w1(d * f), w2(f * d), u(d), g(d);
    for (auto& w : w1) w = normal(rng) * std::sqrt(s1 / d);
    for (auto& w : w2) w = normal(rng) * std::sqrt(s2 / f);
    double norm = 0.0;
    for (auto& x : u) {
      x = normal(rng);
      norm += x * x;
    }
    for (auto& x : u) x *= std::sqrt(d / norm);  // ||u||^2 = d, as after a norm
    for (auto& x : g) x = normal(rng);
    std::vector<double> z(f, 0.0), out(d, 0.0), back_hidden(f, 0.0), back(d, 0.0);
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < f; ++j) z[j] += u[i] * w1[i * f + j];
    for (int j = 0; j < f; ++j)
      for (int i = 0; i < d; ++i) out[i] += activate(Activation::gelu, z[j]) * w2[j * d + i];
    for (int j = 0; j < f; ++j) {
      for (int i = 0; i < d; ++i) back_hidden[j] += w2[j * d + i] * g[i];
      back_hidden[j] *= activate_derivative(Activation::gelu, z[j]);
    }
    for (int i = 0; i < d; ++i)
      for (int j = 0; j < f; ++j) back[i] += w1[i * f + j] * back_hidden[j];
    double out_sq = 0.0, back_sq = 0.0, g_sq = 0.0;
    for (int i = 0; i < d; ++i) out_sq += out[i] * out[i], back_sq += back[i] * back[i], g_sq += g[i] * g[i];
    qs.push_back(out_sq / d);
    chis.push_back(back_sq / g_sq);
  }
  auto estimate = [](const std::vector<double>& v) {
    double m = 0.0, ss = 0.0;
    for (double x : v) m += x;
    m /= v.size();
    for (double x : v) ss += (x - m) * (x - m);
    return Estimate{m, std::sqrt(ss / (v.size() - 1) / v.size())};
  };
  const BranchGains exact = mlp_gains(Activation::gelu, s1, s2);
  const Estimate q = estimate(qs), chi = estimate(chis);
  INFO("q " << exact.q << " vs " << q.mean << " +- " << q.se << "; chi " << exact.chi << " vs " << chi.mean
            << " +- " << chi.se);
  CHECK(std::abs(exact.q - q.mean) <= kSigmas * q.se);
  CHECK(std::abs(exact.chi - chi.mean) <= kSigmas * chi.se);
}
