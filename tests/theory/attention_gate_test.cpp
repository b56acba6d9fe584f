// The attention output gate's Gaussian moments (theory/attention_gate.hpp) against identities that hold
// exactly and against an independent adaptive quadrature (Boost's Gauss-Kronrod on the real line), and the
// gated attention branch's maps against their construction (theory/branch_model.cpp).
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "theory/attention_gate.hpp"
#include "theory/branch_model.hpp"

using namespace normsim::theory;

namespace {
double sigmoid(double z) {
  return 1.0 / (1.0 + std::exp(-z));
}
// E f(sqrt(s) x), x ~ N(0, 1), adaptively.
template <class F>
double expect(F f, double s) {
  const auto integrand = [&](double x) {
    return f(std::sqrt(s) * x) * std::exp(-0.5 * x * x) / std::sqrt(2 * M_PI);
  };
  const double inf = std::numeric_limits<double>::infinity();
  return boost::math::quadrature::gauss_kronrod<double, 61>::integrate(integrand, -inf, inf, 15, 1e-13);
}
}  // namespace

TEST_CASE("sigmoid gate moments: one token against adaptive quadrature, token pairs against identities",
          "[theory][gate]") {
  for (const double s : {0.1, 1.0, 2.25, 9.0, 100.0}) {
    INFO("s " << s);
    const GateMoments one = sigmoid_gate_moments(s, 1.0), zero = sigmoid_gate_moments(s, 0.0),
                      minus = sigmoid_gate_moments(s, -1.0), mid = sigmoid_gate_moments(s, 0.4);
    const double s2 = expect([](double z) { return sigmoid(z) * sigmoid(z); }, s);
    const double d1 = expect([](double z) { return sigmoid(z) * (1 - sigmoid(z)); }, s);
    const double d2 = expect([](double z) { return std::pow(sigmoid(z) * (1 - sigmoid(z)), 2); }, s);
    CHECK(one.s2 == Approx(s2).epsilon(1e-10));
    CHECK(one.d2 == Approx(d2).epsilon(1e-10));
    CHECK(one.s11 == Approx(s2).epsilon(1e-10));  // rho = 1: the same z
    CHECK(one.d11 == Approx(d2).epsilon(1e-10));
    CHECK(zero.s11 == Approx(0.25).epsilon(1e-10));  // independent: (E sigmoid)^2, E sigmoid = 1/2
    CHECK(zero.d11 == Approx(d1 * d1).epsilon(1e-10));
    // rho = -1: z_b = -z_a, sigmoid(-z) = 1 - sigmoid(z) and sigmoid' is even.
    CHECK(minus.s11 == Approx(0.5 - s2).epsilon(1e-10));
    CHECK(minus.d11 == Approx(d2).epsilon(1e-10));
    CHECK(mid.s11 > zero.s11);  // increasing in rho (positive Hermite coefficients squared)
    CHECK(mid.s11 < one.s11);
  }
  const GateMoments z = sigmoid_gate_moments(0.0, 0.3);
  CHECK(z.s2 == 0.25);
  CHECK(z.d11 == 1.0 / 16);
  CHECK_THROWS(sigmoid_gate_moments(-1.0, 0.0));
}

TEST_CASE("gated attention branch: output Gram times the gate's moments, two backward paths",
          "[theory][gate]") {
  const AttentionMixing mix = AttentionMixing::uniform(8, false);
  const Branch plain = Branch::attention(1.3, mix), gated = plain.gated(2.25);
  const TokenGram in{1.0, 0.3};
  const auto p = plain.evaluate(in), g = gated.evaluate(in);
  const GateMoments m = sigmoid_gate_moments(2.25, 0.3);
  CHECK(g.out.diag == Approx(p.out.diag * m.s2));
  CHECK(g.out.off == Approx(p.out.off * m.s11));
  const TokenGram grad{0.7, 0.2};
  const TokenGram value = p.back({grad.diag * m.s2, grad.off * m.s11});
  const TokenGram gate{2.25 * p.out.diag * m.d2 * grad.diag, 2.25 * p.out.off * m.d11 * grad.off};
  CHECK(g.back(grad).diag == Approx(value.diag + gate.diag));
  CHECK(g.back(grad).off == Approx(value.off + gate.off));
  CHECK(plain.gated(std::nullopt).evaluate(in).out.diag == p.out.diag);
  CHECK_THROWS(Branch::mlp(Activation::relu, 1, 1, 1).gated(1.0));
}
