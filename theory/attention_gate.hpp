// The Gaussian moments of the attention output gate sigmoid(z) (attention_gate; Qiu et al. 2025), the only
// new inputs of the gated attention's mean field (theory/branch_model.cpp, docs/theory_notes.md §"Attention
// output gate" [DERIVED]): at infinite width the gate pre-activation z = u W_g of a token is N(0, s) with
// s = sigma_g^2 m (m the branch input's second moment), two tokens' z correlated as their inputs (rho).
#pragma once

namespace normsim::theory {

struct GateMoments {
  double s2 = 0.25;   // E sigmoid(z)^2
  double s11 = 0.25;  // E sigmoid(z_a) sigmoid(z_b), corr(z_a, z_b) = rho
  double d2 = 0.0;    // E sigmoid'(z)^2
  double d11 = 0.0;   // E sigmoid'(z_a) sigmoid'(z_b)
};

// s >= 0, rho in [-1, 1]; s = 0 gives the constant gate 1/2 (s2 = s11 = 1/4, d2 = d11 = 1/16). No closed
// form: one fixed-rule quadrature inside another (theory/gaussian_panels.hpp), accurate to ~1e-12.
GateMoments sigmoid_gate_moments(double s, double rho);

}  // namespace normsim::theory
