// The Gaussian expectations of DyT's tanh and Derf's erf (theory/pointwise_norm.hpp): closed forms for erf
// and fixed-seed Monte Carlo (5 se, tests/theory/mc_helpers.hpp) for both, with shifts and negative
// token correlations.
#include "theory/pointwise_norm.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "mc_helpers.hpp"
#include "theory/meanfield.hpp"

using namespace normsim::theory;
using normsim::theory::test::kSigmas;
using normsim::theory::test::monte_carlo;

namespace {
constexpr double kPi = 3.14159265358979323846;
}

TEST_CASE("Derf's expectations with no shift equal their closed forms") {
  // u ~ N(0, v), v = alpha^2 q, cov(u_t, u_s) = w = alpha^2 c [DERIVED]:
  //   E erf(u_t) erf(u_s) = (2/pi) asin(2w / (1 + 2v)),  E erf'(u) = (2/sqrt(pi)) / sqrt(1 + 2v),
  //   E erf'(u_t) erf'(u_s) = (4/pi) / sqrt((1 + 2v)^2 - 4 w^2)  (E exp(-u^T u) = det(I + 2 Sigma)^(-1/2)).
  // With a shift s: E erf(u) = erf(s / sqrt(1 + 2v)).
  for (const auto& [alpha, q, c] :
       {std::tuple{0.5, 1.0, 0.3}, {1.7, 2.0, -1.1}, {0.1, 40.0, 39.0}, {3.0, 1.0, 0.0}}) {
    const double v = alpha * alpha * q, w = alpha * alpha * c;
    const PointwiseMoments m = pointwise_moments(NormKind::derf, alpha, 0.0, q, c);
    INFO("alpha " << alpha << " q " << q << " c " << c);
    CHECK(m.f1 == Approx(0.0).margin(1e-12));
    CHECK(m.f2 == Approx(2 / kPi * std::asin(2 * v / (1 + 2 * v))).epsilon(1e-10));
    CHECK(m.ff == Approx(2 / kPi * std::asin(2 * w / (1 + 2 * v))).epsilon(1e-10).margin(1e-12));
    CHECK(m.d1 == Approx(2 / std::sqrt(kPi) / std::sqrt(1 + 2 * v)).epsilon(1e-10));
    CHECK(m.d2 == Approx(4 / kPi / std::sqrt(1 + 4 * v)).epsilon(1e-10));
    CHECK(m.dd == Approx(4 / kPi / std::sqrt((1 + 2 * v) * (1 + 2 * v) - 4 * w * w)).epsilon(1e-10));
    const PointwiseMoments shifted = pointwise_moments(NormKind::derf, alpha, 0.4, q, c);
    CHECK(shifted.f1 == Approx(std::erf(0.4 / std::sqrt(1 + 2 * v))).epsilon(1e-10));
  }
}

TEST_CASE("tanh and erf expectations: limits of the token correlation") {
  for (const NormKind n : {NormKind::dyt, NormKind::derf}) {
    const PointwiseMoments same = pointwise_moments(n, 0.7, 0.2, 1.5, 1.5);
    CHECK(same.ff == Approx(same.f2).epsilon(1e-10));
    CHECK(same.dd == Approx(same.d2).epsilon(1e-10));
    const PointwiseMoments apart = pointwise_moments(n, 0.7, 0.2, 1.5, 0.0);
    CHECK(apart.ff == Approx(apart.f1 * apart.f1).epsilon(1e-10));
    CHECK(apart.dd == Approx(apart.d1 * apart.d1).epsilon(1e-10));
    // No shift: f is odd, f' even, so c -> -c flips ff and keeps dd.
    const PointwiseMoments plus = pointwise_moments(n, 0.7, 0.0, 1.5, 0.6),
                           minus = pointwise_moments(n, 0.7, 0.0, 1.5, -0.6);
    CHECK(minus.ff == Approx(-plus.ff).epsilon(1e-10));
    CHECK(minus.dd == Approx(plus.dd).epsilon(1e-10));
    // A zero input: u = shift.
    const PointwiseMoments zero = pointwise_moments(n, 0.7, 0.3, 0.0, 0.0);
    const double f = n == NormKind::dyt ? std::tanh(0.3) : std::erf(0.3);
    CHECK(zero.f2 == Approx(f * f));
    CHECK(zero.ff == Approx(f * f));
  }
}

TEST_CASE("tanh and erf expectations agree with fixed-seed Monte Carlo within 5 standard errors") {
  constexpr int n = 400000;
  std::uint64_t seed = 11;
  for (const NormKind norm : {NormKind::dyt, NormKind::derf}) {
    const auto f = [norm](double u) { return norm == NormKind::dyt ? std::tanh(u) : std::erf(u); };
    const auto df = [norm](double u) {
      if (norm == NormKind::derf) return 2 / std::sqrt(kPi) * std::exp(-u * u);
      const double t = std::tanh(u);
      return 1 - t * t;
    };
    for (const auto& [alpha_, shift_, q, c] : {std::tuple{0.5, 0.0, 1.0, 0.3},
                                               {0.8, 0.3, 2.5, -0.5},
                                               {2.0, -0.4, 4.0, 3.2},
                                               {0.2, 0.5, 9.0, 0.0},
                                               {-0.6, 0.7, 3.0, 2.0}}) {
      // Copies: a lambda may not capture a structured binding before C++20's P1091 (clang 14 lacks it).
      const double alpha = alpha_, shift = shift_;
      const PointwiseMoments m = pointwise_moments(norm, alpha, shift, q, c);
      const double sq = std::sqrt(q), rho = c / q, r2 = std::sqrt(1 - rho * rho);
      const auto ut = [&](double z1, double) { return alpha * sq * z1 + shift; };
      const auto us = [&](double z1, double z2) { return alpha * sq * (rho * z1 + r2 * z2) + shift; };
      const std::pair<double, test::Estimate> checks[] = {
          {m.f1, monte_carlo([&](double x, double y) { return f(ut(x, y)); }, n, ++seed)},
          {m.f2, monte_carlo([&](double x, double y) { return f(ut(x, y)) * f(ut(x, y)); }, n, ++seed)},
          {m.ff, monte_carlo([&](double x, double y) { return f(ut(x, y)) * f(us(x, y)); }, n, ++seed)},
          {m.d1, monte_carlo([&](double x, double y) { return df(ut(x, y)); }, n, ++seed)},
          {m.d2, monte_carlo([&](double x, double y) { return df(ut(x, y)) * df(ut(x, y)); }, n, ++seed)},
          {m.dd, monte_carlo([&](double x, double y) { return df(ut(x, y)) * df(us(x, y)); }, n, ++seed)}};
      int i = 0;
      for (const auto& [exact, est] : checks) {
        INFO((norm == NormKind::dyt ? "dyt" : "derf")
             << " alpha " << alpha << " shift " << shift << " q " << q << " c " << c << " moment " << i++
             << ": quadrature " << exact << ", MC " << est.mean << " +- " << est.se);
        CHECK(std::abs(exact - est.mean) <= kSigmas * est.se + 1e-12);
      }
    }
  }
}

TEST_CASE("pointwise_moments refuses a per-token norm") {
  CHECK_THROWS_AS(pointwise_moments(NormKind::layernorm, 0.5, 0.0, 1.0, 0.0), std::invalid_argument);
}

TEST_CASE("the pointwise norms' mean field: what it covers and what it refuses") {
  StackSpec s;
  s.norm = NormKind::dyt;
  CHECK_NOTHROW(meanfield(s));
  s.norm = NormKind::derf;
  s.norm_shift = std::string("0.1 * k");
  CHECK_NOTHROW(meanfield(s));  // Pre-LN: every norm reads x_k, zero-mean
  StackSpec post = s;
  post.placement = Placement::post;
  CHECK_THROWS_AS(meanfield(post), std::invalid_argument);  // reads the previous norm's output
  post.norm_shift = std::string("0");
  CHECK_THROWS_AS(meanfield(post), std::invalid_argument);
  StackSpec lnscale = s;  // Pre-LN with scaled norm outputs: covered
  lnscale.placement = Placement::lnscale;
  CHECK_NOTHROW(meanfield(lnscale));
  StackSpec admin = s;
  admin.placement = Placement::admin;
  CHECK_THROWS_AS(meanfield(admin), std::invalid_argument);
  StackSpec decoder = s;
  decoder.sublayer = SublayerKind::decoder, decoder.depth = 6;
  CHECK_THROWS_AS(meanfield(decoder), std::invalid_argument);
  StackSpec input = s;
  input.input_norm = true;
  CHECK_THROWS_AS(meanfield(input), std::invalid_argument);
  StackSpec mse = s;
  mse.loss = Loss::mse;
  CHECK_THROWS_AS(meanfield(mse), std::invalid_argument);
  StackSpec bad = s;
  bad.norm_alpha = std::string("0.5 +");
  CHECK_THROWS_AS(meanfield(bad), std::invalid_argument);
}
