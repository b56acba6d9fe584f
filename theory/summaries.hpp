// Closed-form summaries that claims quote directly, each the formula of the theory.md section named.
#pragma once
#include <functional>

namespace normsim::theory {

// §3(a) Proposition A / §2.2 P4: Pre-LN v_k = v0 + k q for a constant per-sublayer slope q.
double preln_act_sq(double v0, double q, int k);
// §2.2 P5: Pre-LN per-sublayer backward gain^2 1 + chi / v.
double preln_gain_sq(double chi, double v);
// §2.2 P5: ||g_k||^2 / ||g_K||^2 for constant q, chi, in the Gamma-function form
// Gamma(K+a+r) Gamma(k+a) / (Gamma(K+a) Gamma(k+a+r)), a = v0/q, r = chi/q.
double preln_grad_ratio(double v0, double q, double chi, int k, int depth);
// §2.1 P4 / §3(c): Post-LN per-sublayer backward gain^2 (1 + chi)/(1 + q).
double postln_gain_sq(double q, double chi);
// §2.3: Peri-LN v_k = v0 + k gamma^2 and G^2 = 1 + gamma^2 (chi/q) / v.
double periln_act_sq(double v0, double gamma_sq, int k);
double periln_gain_sq(double q, double chi, double gamma_sq, double v);

// §2.5: B2T per-layer sum second moment ||z||^2/d = 2 + q_F + 2/sqrt(1+q_A) and backward gain^2.
double b2t_sum_sq(double q_a, double q_f);
double b2t_gain_sq(double q_a, double chi_a, double q_f, double chi_f);

// docs/conventions.md (DeepNet §4.3 table, encoder-only, in sublayers): alpha = K^(1/4), beta = (4K)^(-1/4).
double deepnorm_alpha(int depth);
double deepnorm_beta(int depth);
// §2.8: G^2 = (alpha^2 + chi_beta)/(alpha^2 + q_beta), q_beta = beta^4 q for the two beta-scaled matrices.
double deepnorm_gain_sq(double alpha, double q_beta, double chi_beta);

// §2.10: LayerNorm Scaling with degree-1 homogeneous branches: v_L = v0 + q_block H_L.
double harmonic(int n);
double lns_act_sq(double v0, double q_block, int blocks);

// §3(b): Su's effective-depth dilution, measurable at init. tau = t + v0/q.
struct SuRow {
  double norm_sq;       // ||x_t||^2 / d
  double cos_next;      // cos(x_t, x_{t+1})
  double cos_m;         // cos(x_t, x_{t+m})
  double angular;       // (1/pi) arccos cos(x_t, x_{t+m})
  double rel_update;    // ||x_{t+1} - x_t|| / ||x_t||
  double normed_step;   // ||N(x_{t+1}) - N(x_t)|| / sqrt(d)
  double branch_share;  // share of layer t in x_T (Pre-LN: q/(v0 + T q); Post-LN: relative, (1+q)^-(T-t))
};
SuRow su_preln(double v0, double q, int t, int m, int total);
SuRow su_postln(double q, int t, int m, int total);
// Pre-LN merge error sqrt(2 (1 - kappa_F(c))), c = sqrt(tau/(tau+1)), for a branch kernel kappa_F.
double su_merge_error(double v0, double q, int t, const std::function<double(double)>& kappa);

// §3(d) token-cosine recursions, one sublayer; c = 1/T + (1 - 1/T) rho (bidirectional uniform attention).
double token_cos_post_attention(double rho, double sigma_a_sq, int tokens);
double token_cos_post_mlp(double rho, double q, double kappa_of_rho);
double token_cos_pre_attention(double rho, double v, double sigma_a_sq, int tokens);
double token_cos_pre_mlp(double rho, double v, double q, double kappa_of_rho);

}  // namespace normsim::theory
