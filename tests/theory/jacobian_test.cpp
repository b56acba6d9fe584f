// jac_sq's mean field (theory/jacobian.hpp) against the closed form of theory.md §2.2 P5 and its contract.
#include "theory/jacobian.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <vector>

#include "theory/meanfield.hpp"

using namespace normsim::theory;

// Pre-LN ReLU, fan-in init, v_k = v0 + k q with q = chi = 1/2 and v0 = 1: the backward gain of sublayer k is
// 1 + chi/v_k = (k + 3)/(k + 2), so jac_sq_l = prod_{k=l}^{K-1} (k + 3)/(k + 2) = (K + 2)/(l + 2), with or
// without a final norm (its factor is common to every layer and cancels).
TEST_CASE("jac_sq: Pre-LN ReLU telescopes to (K + 2)/(l + 2)") {
  for (bool final_norm : {false, true}) {
    StackSpec s;
    s.placement = Placement::pre;
    s.activation = Activation::relu;
    s.depth = 12;
    s.final_norm = final_norm;
    const MeanFieldProfile m = meanfield(s);
    REQUIRE(m.jac_sq.size() == 13u);
    for (int l = 0; l <= 12; ++l) {
      REQUIRE(m.jac_sq[l].has_value());
      CHECK(*m.jac_sq[l] == Approx((12.0 + 2.0) / (l + 2.0)).epsilon(1e-12));
    }
    CHECK(m.metric("jac_sq") == &m.jac_sq);
  }
}

TEST_CASE("jacobian_sq: ratios to the last layer; undefined without a finite, nonzero seed") {
  const double inf = std::numeric_limits<double>::infinity();
  const auto r = jacobian_sq(std::vector<double>{8.0, inf, 2.0});
  CHECK(*r[0] == 4.0);
  CHECK_FALSE(r[1].has_value());
  CHECK(*r[2] == 1.0);
  for (const auto& v : jacobian_sq(std::vector<double>{1.0, 0.0})) CHECK_FALSE(v.has_value());
  CHECK(jacobian_sq(std::vector<double>{}).empty());
}
