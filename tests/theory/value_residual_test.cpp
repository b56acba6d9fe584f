// The value residual's mean field (Fv; docs/theory_notes.md "Value residual") against its exact special
// cases: lam = 0 is plain attention bit for bit; lam = 1 makes every later attention read V_1 alone, so its
// output Gram is the source's and its input gets no gradient through the values, while the source's input
// gets every layer's.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "theory/meanfield.hpp"
#include "vocab/names.hpp"

using namespace normsim::theory;

namespace {

StackSpec custom(const std::string& block, SublayerKind sub, bool causal) {
  StackSpec s;
  s.placement = Placement::custom;
  s.block = block;
  s.sublayer = sub;
  s.causal = causal;
  s.depth = 8;
  s.tokens = 8;
  s.rho0 = 0.3;
  s.activation = Activation::gelu;
  return s;
}

}  // namespace

TEST_CASE("theory_fv_zero_is_attention") {
  for (const SublayerKind sub : {SublayerKind::attention, SublayerKind::transformer})
    for (const bool causal : {false, true}) {
      const MeanFieldProfile plain = meanfield(custom("x + F(N(x))", sub, causal));
      const MeanFieldProfile mixed = meanfield(custom("x + Fv(N(x), 0)", sub, causal));
      for (const char* name : {"act_sq", "grad_sq", "token_cos", "cos_next", "branch_sq", "jac_sq"}) {
        INFO(normsim::vocab::name(sub) << " causal " << causal << " " << name);
        CHECK(*plain.metric(name) == *mixed.metric(name));
      }
    }
}

// lam = 1 on a bidirectional attention stack, Pre-LN, eps 0: V_n <- V_1, so branch_sq is the source's at
// every sublayer; backward the value path of sublayer n >= 1 reaches u_1 only, so grad_sq is g_K from layer 1
// up, and u_1 = N(x_0) gets K copies of the attention's map of {g_K, 0}: sigma_A^2 g_K / T on both entries
// (uniform P = 11^T / T: back_diag = back_off = 1/T, column sums 1), times N's Jacobian gamma^2 / v_0 on x_0:
// grad_sq_0 = g_K (1 + K sigma_A^2 / (T v_0)).
TEST_CASE("theory_fv_value_gram") {
  StackSpec s = custom("x + Fv(N(x), 1)", SublayerKind::attention, false);
  s.v0 = 2.0;
  const MeanFieldProfile m = meanfield(s);
  for (int k = 1; k < s.depth; ++k) CHECK(*m.branch_sq[std::size_t(k)] == *m.branch_sq[0]);
  const double gK = *m.grad_sq[std::size_t(s.depth)];
  for (int l = 1; l <= s.depth; ++l) CHECK(*m.grad_sq[std::size_t(l)] == Approx(gK).epsilon(1e-14));
  CHECK(*m.grad_sq[0] == Approx(gK * (1.0 + s.depth / (s.tokens * s.v0))).epsilon(1e-14));
  // lam = 0.5, sublayer 1: u_1 = N(x_0) and u = N(x_1) have diagonal gamma^2 = 1 and off-diagonals the token
  // cosines of x_0 and x_1, so the values' Gram is (1/2, o), o = (cos_0 + cos_1) / 4, and uniform P gives
  // branch_sq = sigma_A^2 ((1/2 - o) / T + o).
  const MeanFieldProfile half = meanfield(custom("x + Fv(N(x), 0.5)", SublayerKind::attention, false));
  const double o = (*half.token_cos[0] + *half.token_cos[1]) / 4;
  CHECK(*half.branch_sq[1] == Approx((0.5 - o) / s.tokens + o).epsilon(1e-14));
}
