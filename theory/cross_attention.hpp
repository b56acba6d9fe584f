// The decoder's cross-attention at init, under the uniform-attention mean field (W_Q W_K^T -> 0, theory.md
// §1.2): every target token receives the same average of the encoder tokens' value projections,
//   F(u)[t] = (1/T_e sum_s E[s]) W_V W_O     whatever u is,
// so the branch does not depend on the stream (chi = 0: no gradient reaches u through it) and its output
// Gram is diag = off = sigma_V^2 sigma_O^2 m_E, with m_E the per-coordinate second moment of the encoder
// average: E's tokens have mean square gamma^2 and token cosine rho_E, so
//   m_E = gamma^2 (rho_E + (1 - rho_E) / T_e).
// [DERIVED here; the x-independence is the premise of Admin's Theorem 1 (Liu et al. 2020, arXiv 2004.08249)
// and of the x-independent-branch gain of theory.md §2.1 P4 and §2.5.] A finite-width, uniform-attention
// result: with W_Q W_K^T of order 1 the softmax is not uniform and sum_s p_s^2 > 1/T_e raises m_E.
#pragma once

namespace normsim::theory {

// m_E: per-coordinate second moment of the average of T_e encoder tokens (mean square gamma_sq, cosine
// rho_e).
inline double encoder_average_sq(double gamma_sq, double rho_e, int tokens) {
  return gamma_sq * (rho_e + (1.0 - rho_e) / double(tokens));
}

// q_C: per-coordinate second moment of the cross-attention branch output (sigma_sq = sigma_V^2 sigma_O^2).
inline double cross_attention_branch_sq(double sigma_sq, double gamma_sq, double rho_e, int tokens) {
  return sigma_sq * encoder_average_sq(gamma_sq, rho_e, tokens);
}

// Post-LN's gradient gain across an x-independent branch of second moment q on a stream of second moment 1
// (norm gain 1): G^2 = 1 / (1 + q) (theory.md §2.1 P4).
inline double postln_independent_gain_sq(double q) {
  return 1.0 / (1.0 + q);
}

}  // namespace normsim::theory
