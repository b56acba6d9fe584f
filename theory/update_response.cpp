#include "theory/update_response.hpp"

namespace normsim::theory {

namespace {

bool has_closed_form(const StackSpec& s) {
  const bool homogeneous = s.activation == Activation::relu || s.activation == Activation::linear;
  const bool placement = s.placement == Placement::pre || s.placement == Placement::post;
  return homogeneous && placement && s.sublayer == SublayerKind::mlp && s.branch_scale == "1" &&
         s.block.empty();
}

}  // namespace

Series random_update_output_change(const StackSpec& spec, const MeanFieldProfile& profile, double scale) {
  if (!has_closed_form(spec)) return {};
  const int K = spec.depth;
  if (int(profile.act_sq.size()) != K + 1 || int(profile.branch_sq.size()) != K) return {};
  for (const auto& v : profile.act_sq)
    if (!v) return {};
  for (const auto& b : profile.branch_sq)
    if (!b) return {};
  const double gamma_sq = spec.gamma * spec.gamma;
  const bool post = spec.placement == Placement::post;
  // Two matrices per branch, each moving F by s^2 E[F^2] in power (W1 through act', W2 through act: equal
  // for a homogeneous activation).
  const double injected = 2.0 * scale * scale;
  Series out(K + 1);
  out[0] = 0.0;
  double power = 0.0;  // perturbation power per entry of x_l, summed over the sublayers below l
  for (int k = 0; k < K; ++k) {
    const double v = *profile.act_sq[k], b = *profile.branch_sq[k];
    if (post)  // x_{k+1} = N(x_k + F_k): the sum passes the norm, which rescales by gamma^2 / (v + b)
      power = (power * (1.0 + b / v) + injected * b) * gamma_sq / (v + b);
    else  // x_{k+1} = x_k + F_k(N(x_k)): the branch sees the perturbation through its norm
      power = power * (1.0 + b / v) + injected * b;
    out[k + 1] = power / *profile.act_sq[k + 1];
  }
  return out;
}

}  // namespace normsim::theory
