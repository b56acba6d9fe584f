// The gate moments of a routed MLP (mixture of experts) at infinite width [DERIVED here; docs/theory.md
// "Routed MLP"]. A token's router logits z_e = u . Wr[:, e] are, given the input, iid N(0, s^2) across the E
// experts with s^2 = sigma_r^2 m (sigma_r^2 = fan_in Var(Wr), m the input's second moment per coordinate),
// and those of two tokens a, b are bivariate normal with correlation rho, the inputs' cosine; they are
// independent of the experts' weights. The gates g = gates(z) (top-k of softmax(z), renormalized or not;
// sim/moe_gate.hpp, Mixtral's and OLMoE's rules) then enter the branch's token Gram as
//   E[F(a).F(b)]/d = sum_e E[g_e(a) g_e(b)] E[MLP(a).MLP(b)]/d   (cross-expert terms vanish: independent,
//                                                                  zero-mean experts),
// so the routed output's Gram is the dense MLP's times diag = E[sum_e g_e^2], off = E[sum_e g_e(a) g_e(b)].
// Closed forms: diag = 1 for k = 1 renormalized; s = 0 gives ties everywhere (the lowest k selected): 1/k
// renormalized, k/E^2 softmax; rho = 1 gives off = diag. Otherwise a fixed Monte Carlo rule: N = 2^15 draws
// of (x, y) in R^E x R^E from mt19937_64 seeded 20261127 by Box-Muller, z_a = s x, z_b = s (rho x +
// sqrt(1 - rho^2) y), the same draws for every (s, rho) (smooth in both); its standard error is returned
// with the value (at most 0.5 / sqrt(N) = 0.0028, typically 1e-3 of the value).
// Backward [DERIVED here; docs/theory_notes.md "Routed MLP backward"]: the router's path needs the gates'
// Jacobian J_ej = dg_e/dz_j (the selection held fixed, as sim/moe_gate.hpp differentiates it), through
//   J_ej = g_e ([j = e] - a_j), e selected (0 otherwise),  a = g (renormalized) or p = softmax(z) (softmax),
// in the Frobenius products router_diag = E[sum_{e,j} J_ej(a)^2], router_off = E[sum_{e,j} J_ej(a) J_ej(b)];
// per pair of selected experts sum_j J_ej(a) J_ej(b) = g_e(a) g_e(b) (1 - a_e(a) - a_e(b) + a(a).a(b)).
// Closed forms: 0 for k = 1 renormalized (a constant gate); at s = 0 (1/k)(1 - 1/k) renormalized, k (1 - 1/E)
// / E^2 softmax; rho = 1 gives off = diag. Otherwise the same draws as the gate moments.
#pragma once

namespace normsim::theory {

struct RoutedMlp {
  int experts = 0;  // E; 0: a dense MLP
  int top_k = 1;
  bool renormalized = true;
  double router_sigma_sq = 1.0;  // fan_in Var(Wr)
  // false: the backward leaves the router's path out (the gates held fixed, as a stop-gradient on the logits
  // would). No config sets it; it lets tests show that the simulator's gradients reject that model.
  bool router_path = true;
};

struct RoutingMoments {
  double diag = 1.0, off = 1.0;                      // E[sum_e g_e^2], E[sum_e g_e(a) g_e(b)]
  double diag_se = 0.0, off_se = 0.0;                // the rule's standard errors (0 for a closed form)
  double router_diag = 0.0, router_off = 0.0;        // E[sum_{e,j} J_ej(a)^2], E[sum_{e,j} J_ej(a) J_ej(b)]
  double router_diag_se = 0.0, router_off_se = 0.0;  // their standard errors
};

// The gate moments and the gates' Jacobian moments at logit variance s_sq and token correlation rho.
RoutingMoments gate_moments(const RoutedMlp& r, double s_sq, double rho);

}  // namespace normsim::theory
