// Branch statistics of theory.md §0 for a branch whose input has second moment m per coordinate
// (m = 1 on a normalized input): forward gain q, backward gain chi, normalized kernel kappa.
// Every gain is a "gain^2" = fan_in * Var(W) (theory.md §0), so mlp_ratio and width never enter.
#pragma once
#include "theory/activation.hpp"

namespace normsim::theory {

struct BranchGains {
  double q = 0.0;    // E||F(u)||^2 / d
  double chi = 0.0;  // E||J_F(u)^T g||^2 / ||g||^2, g independent of the branch weights
};

// MLP F(u) = phi(u W1) W2 [DERIVED, theory.md §1.1]: q = s2 M2(s1 m), chi = s1 s2 D2(s1 m).
BranchGains mlp_gains(Activation act, double sigma1_sq, double sigma2_sq, double m = 1.0);
// SwiGLU F(u) = (silu(u Wg) * (u W1)) W2 [DERIVED, theory.md §1.1, generalized to separate gate and up
// gains]: q = s2 M2(sg m) s1 m, chi = s2 [sg s1 m D2(sg m) + s1 M2(sg m)] with M2, D2 of silu.
BranchGains swiglu_gains(double sigma_gate_sq, double sigma1_sq, double sigma2_sq, double m = 1.0);
// Uniform-attention value path [DERIVED, theory.md §1.2]: q = sigma_A^2 c_x m, chi = sigma_A^2 c_g,
// sigma_A^2 = sigma_V^2 sigma_O^2. Exact only for W_Q, W_K -> 0.
BranchGains attention_gains(double sigma_a_sq, double c_x, double c_g, double m = 1.0);
// Token coherence of uniform bidirectional attention on equicorrelated tokens (theory.md §0):
// c_x = rho + (1 - rho) / T.
double uniform_coherence(double rho, int tokens);

// Normalized kernels kappa_F(rho) = E[F(u) F(u')] / E||F(u)||^2 at cos(u, u') = rho.
double mlp_kappa(Activation act, double sigma1_sq, double rho, double m = 1.0);
// SwiGLU: the gate and up paths are independent, so kappa = kappa_silu(rho) * rho [DERIVED here].
double swiglu_kappa(double sigma_gate_sq, double rho, double m = 1.0);
// Uniform bidirectional attention sends the same vector to every token: kappa = 1 [theory.md §1.2].
inline double attention_kappa_bidirectional() {
  return 1.0;
}

}  // namespace normsim::theory
