// Config -> StackSpec (see spec_from_config.hpp).
#include "meanfield_of/spec_from_config.hpp"

#include <cmath>
#include <stdexcept>

#include "sim/edges.hpp"
#include "sim/init.hpp"
#include "sim/parametrization.hpp"
#include "sim/placement.hpp"
#include "sim/placements/expression.hpp"
#include "sim/stack.hpp"
#include "vocab/block_expr.hpp"

namespace normsim::meanfield_of {

namespace {

double gain_sq(const sim::StackShape& shape, const sim::Placement& placement, int k, sim::WeightKind w) {
  const double std = sim::weight_std(shape, placement, k, w);
  return shape.fan_in(w) * std * std;
}

theory::WeightGains gains_at(const sim::StackShape& shape, const sim::Placement& placement, int k) {
  using W = sim::WeightKind;
  theory::WeightGains g;
  g.w1 = gain_sq(shape, placement, k, W::w1);
  g.w2 = gain_sq(shape, placement, k, W::w2);
  g.wgate = gain_sq(shape, placement, k, W::wgate);
  g.wq = gain_sq(shape, placement, k, W::wq);
  g.wk = gain_sq(shape, placement, k, W::wk);
  g.wv = gain_sq(shape, placement, k, W::wv);
  g.wo = gain_sq(shape, placement, k, W::wo);
  g.wga = gain_sq(shape, placement, k, W::wga);
  return g;
}

// A parametrization's per-sublayer gains and branch multipliers (sim/parametrization.hpp), as the
// simulator draws and applies them. The cross-attention (cq ... co) reads wq ... wo's gains, as without one.
void set_parametrization(theory::StackSpec& s, const sim::StackShape& shape,
                         const sim::Placement& placement) {
  s.m_N = double(shape.width) / shape.cfg.base_width, s.m_L = double(shape.depth) / shape.cfg.base_depth;
  if (!shape.rules) return;
  std::vector<double> router;  // at the MLP sublayers
  for (int k = 0; k < shape.depth; ++k) {
    s.sigma_sq_per_layer.push_back(gains_at(shape, placement, k));
    s.branch_multiplier.push_back(shape.rules->branch_mult(k));
    if (shape.experts > 0 && shape.branch(k) == sim::BranchKind::mlp)
      router.push_back(gain_sq(shape, placement, k, sim::WeightKind::wrouter));
  }
  if (router.empty()) return;
  s.router_sigma_sq = router.front();
  for (double g : router)
    if (g != router.front())
      throw std::invalid_argument(
          "parametrization: the router's init varies with the sublayer, and the routed MLP's mean field "
          "(theory/routing.hpp) takes one router gain");
}

}  // namespace

namespace {
// x_0's Gram and the loss's seed with the edge matrices (sim/edges.hpp; docs/design/parametrization.md
// 3.4). A linear map W of iid N(0, sigma^2) entries gives E[x_t . x_s] / d = sigma^2 (u_t . u_s): the
// Gaussian input's Gram scaled by sigma^2 input_width, its correlation kept; token ids, one-hot rows, give
// sigma^2 on the diagonal and sigma^2 P(id_t = id_s) = sigma^2 / vocab off it.
void set_edges(theory::StackSpec& s, const sim::StackShape& shape) {
  const sim::Config& c = shape.cfg;
  const double input_sq = c.input_std * c.input_std;
  // Said by its key, not by the spec's field the check would name (StackSpec.v0); token ids (vocab > 0)
  // do not read input_std.
  if (!(input_sq > 0) && !(sim::has_embedding(c) && c.vocab > 0))
    throw std::invalid_argument("input_std = 0: the mean field needs a nonzero input");
  s.v0 = input_sq;
  s.rho0 = c.input_corr;
  if (sim::has_embedding(c)) {
    const double var = std::pow(sim::edge_std(shape, sim::Edge::embedding), 2);
    s.v0 = c.vocab > 0 ? var : var * c.input_width * input_sq;
    s.rho0 = c.vocab > 0 ? 1.0 / c.vocab : c.input_corr;
  }
  if (sim::has_readout(c))
    s.readout_sq = c.output_width * std::pow(sim::edge_std(shape, sim::Edge::readout), 2);
}
}  // namespace

theory::StackSpec to_stack_spec(const sim::Config& c) {
  const sim::StackShape shape(c);
  const std::shared_ptr<const sim::Placement> owned = sim::placement_for(c);
  const sim::Placement& placement = *owned;
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
  s.qk_norm = c.qk_norm;
  s.bias_sq = c.bias ? c.init_bias * c.init_bias : 0.0;
  s.attention_gate = c.attention_gate;
  s.moe_experts = c.moe_experts;
  s.moe_top_k = c.moe_top_k;
  s.moe_renormalized = c.moe_gate == vocab::MoeGate::renormalized;
  if (c.moe_experts > 0) s.router_sigma_sq = gain_sq(shape, placement, 0, sim::WeightKind::wrouter);
  s.sigma_sq = gains_at(shape, placement, 0);
  set_parametrization(s, shape, placement);
  set_edges(s, shape);
  s.encoder_cos = c.encoder_cos;
  s.input_norm = c.input_norm;
  // "true" after a placement that already ends in a norm normalizes a normalized vector: the identity, which
  // is what the theory's "applied only where needed" gives.
  s.final_norm = c.final_norm != vocab::FinalNorm::never;
  s.gamma = c.norm_gain;
  s.eps = c.norm_eps;  // every norm's epsilon, as the simulator applies it (sim/rownorm.hpp)
  s.norm = c.norm;
  s.norm_alpha = c.norm_alpha;  // DyT / Derf (sim/norm_site.hpp)
  s.norm_shift = c.norm_shift;
  s.final_norm_alpha = c.final_norm_alpha;
  s.final_norm_shift = c.final_norm_shift;
  if (c.deepnorm_alpha > 0) s.deepnorm_alpha = c.deepnorm_alpha;
  s.mix_fraction = c.mix_fraction;
  s.rezero_alpha = c.rezero_alpha;
  s.spannorm_lambda = c.spannorm_lambda;
  s.loss = c.loss;
  s.random_update_scale = c.update == vocab::Update::random ? c.update_scale : 0.0;
  // The same expressions the simulator runs, with the values of every name they read.
  s.block = c.placement == vocab::Placement::custom ? c.block : "";
  s.branch_scale = c.branch_scale;
  const vocab::ScalarEnv env = sim::scalar_env(shape, 0);
  std::vector<std::string> names = vocab::params(vocab::parse_scalar(c.branch_scale));
  if (vocab::is_pointwise(c.norm))
    for (const std::string* e : {&c.norm_alpha, &c.norm_shift})
      for (std::string& n : vocab::params(vocab::parse_scalar(*e))) names.push_back(std::move(n));
  if (!placement.expression().empty())
    for (const vocab::Expr& e : vocab::parse_block(placement.expression()).sublayers)
      for (std::string& n : vocab::params(e)) names.push_back(std::move(n));
  for (const std::string& n : names) s.params[n] = env.param(n);
  theory::validate(s);
  return s;
}

}  // namespace normsim::meanfield_of
