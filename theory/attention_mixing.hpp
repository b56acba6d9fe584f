// Token mixing of uniform attention P (rows sum to 1), the W_Q, W_K -> 0 approximation of theory.md §1.2:
// bidirectional P = 11^T / T, causal P_ij = 1/i for j <= i (1-based). The mean field keeps tokens
// exchangeable, so a causal P enters through position averages of P P^T, P^T P and the column sums
// s = P^T 1 (an approximation for causal masks: real causal stacks give position-dependent moments).
#pragma once

namespace normsim::theory {

struct AttentionMixing {
  double fwd_diag = 0.0, fwd_off = 0.0;    // mean diagonal / off-diagonal entry of P P^T (p_i of theory §0)
  double back_diag = 0.0, back_off = 0.0;  // the same for P^T P
  double col_diag = 0.0, col_off = 0.0;    // mean s_j^2 and mean s_j s_k (j != k)

  static AttentionMixing uniform(int tokens, bool causal);
};

}  // namespace normsim::theory
