// The routed MLP's gate moments (theory/routing.hpp): closed forms, and the Monte Carlo rule against an
// independent quadrature where one exists. E = 2, k = 2 renormalized: g = softmax(z1, z2), so
// sum g^2 = sigma(D)^2 + sigma(-D)^2 with D = z1 - z2 ~ N(0, 2 s^2): a one-dimensional integral, done here by
// the midpoint rule on [-10, 10] standard deviations (error far below 1e-6). The rule's tolerance: 4 of its
// own standard errors.
#include <catch2/catch.hpp>
#include <cmath>

#include "theory/routing.hpp"

using normsim::theory::gate_moments;
using normsim::theory::RoutedMlp;

TEST_CASE("routed MLP gate moments: closed forms", "[theory][moe]") {
  const auto zero = gate_moments(RoutedMlp{8, 2, true, 1.0}, 0.0, 0.3);
  CHECK(zero.diag == Approx(0.5));  // ties: the lowest 2, gates 1/2
  CHECK(gate_moments(RoutedMlp{8, 2, false, 1.0}, 0.0, 0.3).diag == Approx(2.0 / 64));
  const auto one = gate_moments(RoutedMlp{6, 1, true, 1.0}, 2.5, 0.4);
  CHECK(one.diag == 1.0);
  CHECK(one.off > 0.0);
  CHECK(one.off < 1.0);  // P(the two tokens pick the same expert)
  const auto same = gate_moments(RoutedMlp{5, 2, false, 1.0}, 1.7, 1.0);
  CHECK(same.off == same.diag);
  // Independent tokens (rho = 0) under k = 1: P(same expert) = 1/E.
  const auto indep = gate_moments(RoutedMlp{4, 1, true, 1.0}, 3.0, 0.0);
  CHECK(std::abs(indep.off - 0.25) <= 4 * indep.off_se);
}

TEST_CASE("routed MLP gate moments: the Monte Carlo rule against quadrature", "[theory][moe]") {
  for (const double s_sq : {0.3, 1.0, 4.0}) {
    const double sd = std::sqrt(2.0 * s_sq);
    const int n = 200000;
    double sum = 0;
    for (int i = 0; i < n; ++i) {
      const double x = -10.0 + 20.0 * (i + 0.5) / n;  // in standard deviations of D
      const double sig = 1.0 / (1.0 + std::exp(-sd * x));
      sum += (sig * sig + (1 - sig) * (1 - sig)) * std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI) * 20.0 / n;
    }
    const auto m = gate_moments(RoutedMlp{2, 2, true, 1.0}, s_sq, 0.0);
    INFO("s^2 " << s_sq << ": rule " << m.diag << " +- " << m.diag_se << ", quadrature " << sum);
    CHECK(std::abs(m.diag - sum) <= 4 * m.diag_se);
  }
}

// The gates' Jacobian moments (routing.hpp). E = 2, k = 2: g = (sigma(D), sigma(-D)), D = z1 - z2, so J =
// sigma'(D) [[1, -1], [-1, 1]] and sum_{e,j} J_ej^2 = 4 sigma'(D)^2; two independent tokens (rho = 0) give
// router_off = 4 (E sigma'(D))^2. One-dimensional integrals by the midpoint rule, as above; the rule's
// tolerance 4 of its own standard errors.
TEST_CASE("routed MLP gate Jacobian moments: closed forms and quadrature", "[theory][moe]") {
  CHECK(gate_moments(RoutedMlp{6, 1, true, 1.0}, 2.5, 0.4).router_diag == 0.0);  // a constant gate of 1
  CHECK(gate_moments(RoutedMlp{6, 1, true, 1.0}, 2.5, 0.4).router_off == 0.0);
  CHECK(gate_moments(RoutedMlp{8, 2, true, 1.0}, 0.0, 0.3).router_diag == Approx(0.25));  // (1/k)(1 - 1/k)
  CHECK(gate_moments(RoutedMlp{8, 2, false, 1.0}, 0.0, 0.3).router_off == Approx(2.0 * 7.0 / 512));
  const auto same = gate_moments(RoutedMlp{5, 2, false, 1.0}, 1.7, 1.0);
  CHECK(same.router_off == same.router_diag);
  CHECK(same.router_diag > 0.0);
  for (const double s_sq : {0.3, 1.0, 4.0, 36.0}) {
    const double sd = std::sqrt(2.0 * s_sq);
    const int n = 200000;
    double square = 0, mean = 0;
    for (int i = 0; i < n; ++i) {
      const double x = -10.0 + 20.0 * (i + 0.5) / n;  // in standard deviations of D
      const double sig = 1.0 / (1.0 + std::exp(-sd * x)),
                   w = std::exp(-0.5 * x * x) / std::sqrt(2.0 * M_PI) * 20.0 / n;
      square += 4 * sig * sig * (1 - sig) * (1 - sig) * w, mean += sig * (1 - sig) * w;
    }
    for (const bool renormalized : {true, false}) {  // k = E: the two rules coincide
      const auto m = gate_moments(RoutedMlp{2, 2, renormalized, 1.0}, s_sq, 0.0);
      INFO("s^2 " << s_sq << ": rule " << m.router_diag << " +- " << m.router_diag_se << ", quadrature "
                  << square << "; off " << m.router_off << " +- " << m.router_off_se << ", quadrature "
                  << 4 * mean * mean);
      CHECK(std::abs(m.router_diag - square) <= 4 * m.router_diag_se);
      CHECK(std::abs(m.router_off - 4 * mean * mean) <= 4 * m.router_off_se);
    }
  }
}
