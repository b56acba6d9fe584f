// Config -> StackSpec (see spec_from_config.hpp).
#include "check/spec_from_config.hpp"

#include "sim/init.hpp"
#include "sim/placement.hpp"
#include "sim/stack.hpp"

namespace normsim::check {

namespace {

double gain_sq(const sim::StackShape& shape, const sim::Placement& placement, sim::WeightKind w) {
  const double std = sim::weight_std(shape, placement, w);
  return shape.fan_in(w) * std * std;
}

}  // namespace

theory::StackSpec to_stack_spec(const sim::Config& c) {
  const sim::StackShape shape(c);
  // The mean field of a custom block or a branch_scale is not derived yet (theory has only the built-ins).
  if (c.placement == vocab::Placement::custom)
    throw std::invalid_argument("no mean field for a custom block yet");
  if (c.branch_scale != "1") throw std::invalid_argument("no mean field with a branch_scale yet");
  const sim::Placement& placement = sim::find_placement(c.placement);
  theory::StackSpec s;
  s.placement = c.placement;
  s.sublayer = c.sublayer;
  s.activation = c.activation;
  s.depth = c.depth;
  s.width = c.width;
  s.tokens = c.tokens;
  s.mlp_ratio = c.mlp_ratio;
  s.heads = c.heads;
  s.causal = c.causal;
  using W = sim::WeightKind;
  s.sigma_sq.w1 = gain_sq(shape, placement, W::w1);
  s.sigma_sq.w2 = gain_sq(shape, placement, W::w2);
  s.sigma_sq.wgate = gain_sq(shape, placement, W::wgate);
  s.sigma_sq.wq = gain_sq(shape, placement, W::wq);
  s.sigma_sq.wk = gain_sq(shape, placement, W::wk);
  s.sigma_sq.wv = gain_sq(shape, placement, W::wv);
  s.sigma_sq.wo = gain_sq(shape, placement, W::wo);
  s.v0 = c.input_std * c.input_std;
  s.rho0 = c.input_corr;
  s.input_norm = c.input_norm;
  // "true" after a placement that already ends in a norm normalizes a normalized vector: the identity, which
  // is what the theory's "applied only where needed" gives.
  s.final_norm = c.final_norm != vocab::FinalNorm::never;
  s.gamma = c.norm_gain;
  s.eps = c.norm_eps;  // every norm's epsilon, as the simulator applies it (sim/rownorm.hpp)
  s.norm = c.norm;
  if (c.deepnorm_alpha > 0) s.deepnorm_alpha = c.deepnorm_alpha;
  s.mix_fraction = c.mix_fraction;
  s.rezero_alpha = c.rezero_alpha;
  s.spannorm_lambda = c.spannorm_lambda;
  s.loss = c.loss;
  theory::validate(s);
  return s;
}

}  // namespace normsim::check
