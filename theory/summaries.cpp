// Closed-form summaries; each formula's source is in summaries.hpp.
#include "theory/summaries.hpp"

#include <algorithm>
#include <cmath>

#include "theory/branch_gains.hpp"

namespace normsim::theory {
namespace {
constexpr double kPi = 3.14159265358979323846;
}

double preln_act_sq(double v0, double q, int k) {
  return v0 + k * q;
}
double preln_gain_sq(double chi, double v) {
  return 1.0 + chi / v;
}

double preln_grad_ratio(double v0, double q, double chi, int k, int depth) {
  const double a = v0 / q, r = chi / q;
  return std::exp(std::lgamma(depth + a + r) + std::lgamma(k + a) - std::lgamma(depth + a) -
                  std::lgamma(k + a + r));
}

double postln_gain_sq(double q, double chi) {
  return (1.0 + chi) / (1.0 + q);
}
double periln_act_sq(double v0, double gamma_sq, int k) {
  return v0 + k * gamma_sq;
}
double periln_gain_sq(double q, double chi, double gamma_sq, double v) {
  return 1.0 + gamma_sq * (chi / q) / v;
}

double b2t_sum_sq(double q_a, double q_f) {
  return 2.0 + q_f + 2.0 / std::sqrt(1.0 + q_a);
}

double b2t_gain_sq(double q_a, double chi_a, double q_f, double chi_f) {
  const double num = 1.0 + (1.0 + chi_a) * (1.0 + chi_f) / (1.0 + q_a) + 2.0 / std::sqrt(1.0 + q_a);
  return num / b2t_sum_sq(q_a, q_f);
}

double deepnorm_alpha(int depth) {
  return std::pow(double(depth), 0.25);
}
double deepnorm_beta(int depth) {
  return std::pow(4.0 * depth, -0.25);
}
double deepnorm_gain_sq(double alpha, double q_beta, double chi_beta) {
  return (alpha * alpha + chi_beta) / (alpha * alpha + q_beta);
}

double harmonic(int n) {
  double h = 0.0;
  for (int i = n; i >= 1; --i) h += 1.0 / i;  // smallest terms first
  return h;
}
double lns_act_sq(double v0, double q_block, int blocks) {
  return v0 + q_block * harmonic(blocks);
}

SuRow su_preln(double v0, double q, int t, int m, int total) {
  const double tau = t + v0 / q;
  const double c1 = std::sqrt(tau / (tau + 1.0)), cm = std::sqrt(tau / (tau + m));
  return {q * tau,
          c1,
          cm,
          std::acos(cm) / kPi,
          1.0 / std::sqrt(tau),
          std::sqrt(2.0 - 2.0 * c1),
          q / (v0 + total * q)};
}

SuRow su_postln(double q, int t, int m, int total) {
  const double c1 = 1.0 / std::sqrt(1.0 + q), cm = std::pow(1.0 + q, -0.5 * m);
  const double step = std::sqrt(2.0 - 2.0 * c1);
  return {1.0, c1, cm, std::acos(cm) / kPi, step, step, std::pow(1.0 + q, -double(total - t))};
}

double su_merge_error(double v0, double q, int t, const std::function<double(double)>& kappa) {
  const double tau = t + v0 / q;
  return std::sqrt(std::max(0.0, 2.0 * (1.0 - kappa(std::sqrt(tau / (tau + 1.0))))));
}

double token_cos_post_attention(double rho, double sigma_a_sq, int tokens) {
  const double c = uniform_coherence(rho, tokens);
  return (rho + sigma_a_sq * c) / (1.0 + sigma_a_sq * c);
}
double token_cos_post_mlp(double rho, double q, double kappa_of_rho) {
  return (rho + q * kappa_of_rho) / (1.0 + q);
}
double token_cos_pre_attention(double rho, double v, double sigma_a_sq, int tokens) {
  const double c = uniform_coherence(rho, tokens);
  return (v * rho + sigma_a_sq * c) / (v + sigma_a_sq * c);
}
double token_cos_pre_mlp(double rho, double v, double q, double kappa_of_rho) {
  return (v * rho + q * kappa_of_rho) / (v + q);
}

}  // namespace normsim::theory
