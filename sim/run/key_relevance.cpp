#include "sim/run/key_relevance.hpp"

#include <array>
#include <vector>

#include "sim/edges.hpp"
#include "sim/jacobian_wanted.hpp"
#include "sim/parametrization.hpp"

#include "vocab/block_expr.hpp"
#include "vocab/names.hpp"
#include "vocab/param_rules.hpp"
#include "vocab/sublayer_layout.hpp"

namespace normsim::sim {

namespace {

template <class E>
std::string quoted(E value) {
  std::string s(1, '"');
  s.append(vocab::name(value)).push_back('"');
  return s;
}

// Placement parameters: the placement that reads each one.
std::string placement_parameter(std::string_view key, const Config& c) {
  using P = vocab::Placement;
  constexpr std::array<std::pair<std::string_view, P>, 5> owner{{
      {"deepnorm_alpha", P::deepnorm},
      {"deepnorm_beta", P::deepnorm},
      {"mix_fraction", P::mix},
      {"rezero_alpha", P::rezero},
      {"spannorm_lambda", P::spannorm},
  }};
  // A custom block may name any config key (docs/placements.md): it may read them all.
  for (const auto& [k, p] : owner)
    if (k == key && c.placement != p && c.placement != P::custom)
      return "placement = " + quoted(c.placement) + " does not read it (only " + quoted(p) + ")";
  return "";
}

// Whether an expression of c reads m_N or m_L, which base_width and base_depth define (a parametrization's
// rules may read them all).
bool reads_width_depth_multipliers(const Config& c) {
  if (c.parametrization != "none") return true;
  std::vector<std::string> texts{c.branch_scale};
  if (vocab::is_pointwise(c.norm)) texts.insert(texts.end(), {c.norm_alpha, c.norm_shift});
  std::vector<vocab::Expr> exprs;
  try {
    for (const auto& t : texts) exprs.push_back(vocab::parse_scalar(t));
    if (c.placement == vocab::Placement::custom && !c.block.empty())
      for (auto& e : vocab::parse_block(c.block).sublayers) exprs.push_back(std::move(e));
  } catch (const vocab::ExprError&) {
    return true;  // refused by the config's checks, which say why
  }
  for (const auto& e : exprs)
    for (const auto& n : e.nodes)
      if (n.op == vocab::ExprNode::Op::scalar_var &&
          (n.var == vocab::ScalarVar::m_N || n.var == vocab::ScalarVar::m_L))
        return true;
  return false;
}

// Whether a rule of c's parametrization (the preset's or param_rules) reads config key `key`: nanogpt_sp's
// and megatron_depth_mup's std rules read init_std, and a user's rule may read any numeric key.
bool rules_read(const Config& c, std::string_view key) {
  try {
    for (const vocab::ParamAssignment& a : vocab::parse_param_rules(parametrization_text(c)))
      for (const std::string& name : vocab::params(a.value))
        if (name == key) return true;
  } catch (const vocab::ExprError&) {
    return true;  // refused by the config's checks, which say why
  }
  return false;
}

}  // namespace

bool uses_init_rule(const Config& c, vocab::Init init) {
  const std::string rule(vocab::name(init));
  // The attention gate's W_g follows init_wq unless init_wga is set (sim/init.cpp).
  const bool own_gate = c.attention_gate != vocab::AttentionGate::none && !c.init_wga.empty();
  const std::array overrides{&c.init_w1,     &c.init_w2, &c.init_wgate, &c.init_wq,
                             &c.init_wk,     &c.init_wv, &c.init_wo,    own_gate ? &c.init_wga : &c.init_wq,
                             &c.init_wrouter};
  bool all_overridden = true;
  for (const std::string* o : overrides) {
    if (o == &c.init_wrouter && (c.moe_experts == 0 || c.sublayer == vocab::Sublayer::attention)) continue;
    if (o->empty())
      all_overridden = false;
    else if (o->starts_with(rule + ":"))
      return true;
  }
  return c.init == init && (!all_overridden || has_embedding(c) || has_readout(c));
}

std::string why_key_unused(std::string_view key, const Config& c) {
  if (std::string why = placement_parameter(key, c); !why.empty()) return why;
  if (rules_read(c, key)) return "";
  const vocab::SublayerLayout& layout = vocab::layout(c.sublayer);
  const bool attention = layout.has_attention(), mlp = layout.has(vocab::BranchKind::mlp);
  const bool pointwise = vocab::is_pointwise(c.norm);
  if ((key == "norm_alpha" || key == "final_norm_alpha") && !pointwise)
    return "norm = " + quoted(c.norm) + " has no alpha (only dyt and derf)";
  if ((key == "norm_shift" || key == "final_norm_shift") && c.norm != vocab::Norm::derf)
    return "norm = " + quoted(c.norm) + " has no shift (only derf)";
  if (key == "norm_eps" && pointwise) return "norm = " + quoted(c.norm) + " is pointwise: no epsilon";
  if ((key == "heads" || key == "causal" || key == "qk_norm" || key == "qk_norm_scope" ||
       key == "logit_scaling" || key == "attention_temperature" || key == "attention_gate") &&
      !attention)
    return "sublayer = " + quoted(c.sublayer) + " has no attention";
  if ((key == "mlp_ratio" || key == "activation") && !mlp) return "sublayer = \"attention\" has no MLP";
  if (key == "init_std" && !uses_init_rule(c, vocab::Init::fixed))
    return "no matrix is drawn with the \"fixed\" rule";
  if (key == "init_gain" && !uses_init_rule(c, vocab::Init::fanin) &&
      !uses_init_rule(c, vocab::Init::xavier) && !uses_init_rule(c, vocab::Init::unit))
    return "no matrix is drawn with the \"fanin\", \"xavier\" or \"unit\" rule";
  if ((key == "init_wq" || key == "init_wk" || key == "init_wv" || key == "init_wo") && !attention)
    return "sublayer = " + quoted(c.sublayer) + " has no attention matrices";
  if ((key == "init_w1" || key == "init_w2") && !mlp) return "sublayer = \"attention\" has no MLP matrices";
  if (key == "init_wgate" && (!mlp || c.activation != vocab::Activation::swiglu))
    return "only activation = \"swiglu\" has a gate";
  if (key == "init_wga" && (!attention || c.attention_gate == vocab::AttentionGate::none))
    return "no attention_gate: no gate matrix";
  if (key == "moe_experts" && !mlp) return "sublayer = \"attention\" has no MLP";
  if ((key == "moe_top_k" || key == "moe_gate" || key == "init_wrouter") && (!mlp || c.moe_experts == 0))
    return !mlp ? "sublayer = \"attention\" has no MLP" : "moe_experts = 0: the MLP is dense, with no router";
  if (key == "init_bias" && !c.bias) return "bias = false: no matrix has a bias";
  if (key == "block" && c.placement != vocab::Placement::custom)
    return "placement = " + quoted(c.placement) + " has its own block (only \"custom\" reads this one)";
  const bool stepped = c.update == vocab::Update::sgd || c.update == vocab::Update::adam;
  if (key == "update_lr" && !stepped) return "update = " + quoted(c.update) + " takes no optimizer step";
  if (key == "batches" && c.steps == 0) return "steps = 0: no training step reads a batch";
  if ((key == "adam_beta1" || key == "adam_beta2") && (c.steps == 0 || c.update != vocab::Update::adam))
    return c.update != vocab::Update::adam ? "update = " + quoted(c.update) + " is not adam"
                                           : "steps = 0: the one Adam step keeps no moments";
  if (key == "adam_eps" && c.update != vocab::Update::adam)
    return "update = " + quoted(c.update) + " takes no Adam step";
  if ((key == "base_width" || key == "base_depth") && !reads_width_depth_multipliers(c))
    return "no parametrization and no expression reads m_N or m_L";
  if (key == "update_scale" && c.update != vocab::Update::random)
    return "update = " + quoted(c.update) + " is not a random direction";
  if (key == "qk_norm_scope" && !c.qk_norm) return "qk_norm = false: Q and K are not normalized";
  if ((key == "qk_norm" || key == "qk_norm_scope") &&
      (c.placement == vocab::Placement::hybridnorm || c.placement == vocab::Placement::hybridnorm_star))
    return "placement = " + quoted(c.placement) + " normalizes Q and K already (its QKV-norm, Fqkv)";
  if ((key == "input_std" || key == "input_corr") && c.vocab > 0)
    return "vocab > 0: the input is token ids, not Gaussian coordinates";
  if (key == "input_corr" && c.tokens < 2) return "one token has no correlation between tokens";
  if (key == "encoder_cos" && c.sublayer != vocab::Sublayer::decoder)
    return "sublayer = " + quoted(c.sublayer) + " has no encoder output (only \"decoder\")";
  if (key == "jacobian_probes" && !JacobianWanted::of(c.metrics).any())
    return "metrics names no Jacobian metric (jac_sq, jac_spread, block_identity_dev)";
  return "";
}

}  // namespace normsim::sim
