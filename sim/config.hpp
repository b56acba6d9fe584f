// The resolved configuration of one simulation: every key of a config file, typed and validated.
// Config files, grids and command-line overrides are turned into these at the edge (sim/run/config_file.hpp);
// everything below the CLI sees only a Config, whose names are already enums (vocab/enums.hpp).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "sim/metric_set.hpp"
#include "vocab/enums.hpp"

namespace normsim::sim {

// The most training steps a configuration may take: the design's "a few dozen" with room to spare; every step
// keeps its records in memory until the unit ends (docs/design/parametrization.md 3.5, no mid-training
// checkpoint).
inline constexpr int kMaxSteps = 1000;

struct Config {
  // Model.
  vocab::Sublayer sublayer = vocab::Sublayer::mlp;
  vocab::Placement placement = vocab::Placement::pre;  // see sim/placements/registry.cpp
  vocab::Norm norm = vocab::Norm::layernorm;
  double norm_eps = 1e-5;  // epsilon inside the norm's square root
  double norm_gain = 1.0;  // gamma of every norm at init (bias is 0)
  // dyt, derf: alpha and shift of the norms of sublayer k (expressions of k, K, b, L, attention and numeric
  // keys), and of the final norm (also the encoder output's).
  std::string norm_alpha = "0.5";
  std::string norm_shift = "0";
  double final_norm_alpha = 0.5;
  double final_norm_shift = 0.0;
  int width = 256;         // d
  int tokens = 16;         // T
  int depth = 16;          // K residual sublayers
  double mlp_ratio = 4.0;  // hidden width = round(mlp_ratio * d)
  vocab::Activation activation = vocab::Activation::relu;
  // Routed MLP (mixture of experts, sim/cpu/cpu_moe.hpp): every MLP branch is E experts of the MLP above,
  // each token sent to the top-k of a softmax router (0: the dense MLP).
  int moe_experts = 0;
  int moe_top_k = 2;                                       // Mixtral's num_experts_per_tok
  vocab::MoeGate moe_gate = vocab::MoeGate::renormalized;  // Mixtral's; softmax: OLMoE's, Switch's
  int heads = 4;                                           // attention heads; must divide width
  bool causal = false;                                     // causal attention mask
  bool qk_norm = false;  // norm (the configured one) of Q and K before the logits, any attention
  vocab::QkNormScope qk_norm_scope = vocab::QkNormScope::head;  // per head, or the whole projection (OLMo-2)
  vocab::LogitScaling logit_scaling = vocab::LogitScaling::sqrt;  // logits / sqrt(d_h), or / d_h (muP)
  double attention_temperature = 1.0;                             // and / temperature
  // Gated attention (Qiu et al. 2025): every self-attention's output times sigmoid(u W_g) before W_O.
  vocab::AttentionGate attention_gate = vocab::AttentionGate::none;
  vocab::FinalNorm final_norm = vocab::FinalNorm::auto_;
  bool input_norm = false;  // x_0 = N(input) (Peri-LN's embedding norm)
  // placement = "custom": the block expression (docs/placements.md), e.g. "x + N(F(x))".
  std::string block;
  // Multiplies every branch output, any placement: an expression of numbers (k, K, b, L, config keys).
  std::string branch_scale = "1";
  // Placement parameters.
  double mix_fraction = 0.25;    // Mix-LN: fraction of blocks that are Post-LN
  double deepnorm_alpha = 0.0;   // 0: from depth (alpha = K^(1/4))
  double deepnorm_beta = 0.0;    // 0: from depth (beta = (4K)^(-1/4))
  double rezero_alpha = 0.0;     // ReZero's branch scale at init
  double spannorm_lambda = 1.0;  // SpanNorm's branch scale lambda
  // Init.
  vocab::Init init = vocab::Init::fanin;
  double init_gain = 1.0;      // fanin/xavier: variance gain^2 / fan_in (xavier: 2 gain^2/(in+out))
  double init_std = 0.02;      // fixed: std of every weight
  bool scaled_output = false;  // divide w2 and wo std by sqrt(K) (CogView/Megatron scaled init)
  bool placement_init = true;  // apply the placement's prescribed init (DeepNorm, B2T)
  // Per weight kind overrides: "" (use the above) or "rule:value", e.g. "fanin:2" or "fixed:0.01".
  std::string init_w1, init_w2, init_wgate, init_wq, init_wk, init_wv, init_wo;
  std::string
      init_wga;  // the attention gate's W_g; "" follows init_wq (the official gate is q_proj's columns)
  std::string init_wrouter;  // a routed MLP's router (Mixtral: "fixed:0.02", initializer_range)
  // Parametrization (docs/parametrizations.md): a preset's rules for every matrix's init std and multiplier
  // and the branch multiplier ("none": the init keys above decide; "custom": param_rules alone), then
  // param_rules; the rules read m_N = width / base_width and m_L = depth / base_depth.
  std::string parametrization = "none";
  std::string param_rules;
  int base_width = 256;  // nanoGPT-mup's "base_width is typically 256" (model.py l.135)
  int base_depth = 4;    // sublayers: CompleteP's base of 2 blocks (run.sh l.9)
  // Biases (sim/init.hpp bias_std): every weight matrix but a routed MLP's router gets a bias of fan_out
  // entries, drawn N(0, init_bias^2) (0: zero, nanoGPT's and HF's init).
  bool bias = false;
  double init_bias = 0.0;
  // Inputs.
  double input_std = 1.0;    // std of every input coordinate
  double input_corr = 0.0;   // correlation between tokens, in [0, 1]
  double encoder_cos = 0.0;  // decoder: correlation between the encoder output's tokens, in [0, 1]
  // Edge matrices (sim/edges.hpp; docs/design/parametrization.md 3.4): an embedding x_0 = u W_emb of a
  // Gaussian input u of input_width coordinates, or of token ids in [0, vocab) (x_0[t] = W_emb[id_t]); a
  // readout z = y W_out of output_width logits, on which the loss reads. 0: none (x_0 drawn, loss on y).
  int input_width = 0;
  int vocab = 0;
  int output_width = 0;
  // Backward.
  vocab::Loss loss = vocab::Loss::readout;
  // Random probes per Jacobian metric (jac_sq, jac_spread, block_identity_dev), when `metrics` names one.
  int jacobian_probes = 8;
  // Parameter update W -> W + dW whose output change is measured (sim/single_update.hpp).
  vocab::Update update = vocab::Update::none;
  double update_lr = 1e-3;     // sgd, adam: the learning rate (Adam's default alpha, Kingma & Ba 2015)
  double update_scale = 1e-3;  // random: ||dW||_F / ||W||_F of every matrix
  double adam_eps = 1e-8;      // adam: epsilon of the step g / (|g| + eps) (Kingma & Ba 2015's default)
  // Training (sim/cpu/train_loop.hpp): steps > 0 runs that many steps of `update` (sgd or adam), measuring
  // every metric at steps 0..steps; 0 is the one update above.
  int steps = 0;                                // at most kMaxSteps
  double adam_beta1 = 0.9, adam_beta2 = 0.999;  // steps > 0, adam: Kingma & Ba 2015's defaults
  vocab::Batches batches = vocab::Batches::fixed;
  // Run.
  std::uint64_t seed = 0;
  int samples = 4;                                         // independent initializations per configuration
  vocab::Precision precision = vocab::Precision::float32;  // tf32: CUDA only; bf16: sim/bf16.hpp
  vocab::Recompute recompute = vocab::Recompute::auto_;    // CUDA: weights drawn again in the backward
  // Output: the metrics computed and written (a list of names; a list here does not sweep).
  MetricSet metrics = MetricSet::defaults();
  // The configuration's name in figures and legends, set per variant by `variants`; read by nothing that
  // computes (weights depend on seed, sample, layer and matrix only).
  std::string label;
};

// Every member by its key name (the member's own), in the keys' order. The one list of key names: the key
// table (sim/run/config_schema.cpp) takes its rows' names and order from it, and so do `normsim list keys`,
// run.json and the result files' columns; the block language's numeric parameters read the Config through it
// (sim/placements/expression.cpp).
template <class T>
struct ConfigField {
  std::string_view name;
  T Config::*member;
};
template <class T>
ConfigField(const char*, T Config::*) -> ConfigField<T>;

inline constexpr std::tuple kConfigFields{
    ConfigField{"sublayer", &Config::sublayer},
    ConfigField{"placement", &Config::placement},
    ConfigField{"norm", &Config::norm},
    ConfigField{"norm_alpha", &Config::norm_alpha},
    ConfigField{"norm_shift", &Config::norm_shift},
    ConfigField{"final_norm_alpha", &Config::final_norm_alpha},
    ConfigField{"final_norm_shift", &Config::final_norm_shift},
    ConfigField{"norm_eps", &Config::norm_eps},
    ConfigField{"norm_gain", &Config::norm_gain},
    ConfigField{"width", &Config::width},
    ConfigField{"tokens", &Config::tokens},
    ConfigField{"depth", &Config::depth},
    ConfigField{"mlp_ratio", &Config::mlp_ratio},
    ConfigField{"activation", &Config::activation},
    ConfigField{"moe_experts", &Config::moe_experts},
    ConfigField{"moe_top_k", &Config::moe_top_k},
    ConfigField{"moe_gate", &Config::moe_gate},
    ConfigField{"heads", &Config::heads},
    ConfigField{"causal", &Config::causal},
    ConfigField{"qk_norm", &Config::qk_norm},
    ConfigField{"qk_norm_scope", &Config::qk_norm_scope},
    ConfigField{"logit_scaling", &Config::logit_scaling},
    ConfigField{"attention_temperature", &Config::attention_temperature},
    ConfigField{"attention_gate", &Config::attention_gate},
    ConfigField{"final_norm", &Config::final_norm},
    ConfigField{"input_norm", &Config::input_norm},
    ConfigField{"block", &Config::block},
    ConfigField{"branch_scale", &Config::branch_scale},
    ConfigField{"mix_fraction", &Config::mix_fraction},
    ConfigField{"deepnorm_alpha", &Config::deepnorm_alpha},
    ConfigField{"deepnorm_beta", &Config::deepnorm_beta},
    ConfigField{"rezero_alpha", &Config::rezero_alpha},
    ConfigField{"spannorm_lambda", &Config::spannorm_lambda},
    ConfigField{"init", &Config::init},
    ConfigField{"init_gain", &Config::init_gain},
    ConfigField{"init_std", &Config::init_std},
    ConfigField{"scaled_output", &Config::scaled_output},
    ConfigField{"placement_init", &Config::placement_init},
    ConfigField{"init_w1", &Config::init_w1},
    ConfigField{"init_w2", &Config::init_w2},
    ConfigField{"init_wgate", &Config::init_wgate},
    ConfigField{"init_wq", &Config::init_wq},
    ConfigField{"init_wk", &Config::init_wk},
    ConfigField{"init_wv", &Config::init_wv},
    ConfigField{"init_wo", &Config::init_wo},
    ConfigField{"init_wga", &Config::init_wga},
    ConfigField{"init_wrouter", &Config::init_wrouter},
    ConfigField{"parametrization", &Config::parametrization},
    ConfigField{"param_rules", &Config::param_rules},
    ConfigField{"base_width", &Config::base_width},
    ConfigField{"base_depth", &Config::base_depth},
    ConfigField{"bias", &Config::bias},
    ConfigField{"init_bias", &Config::init_bias},
    ConfigField{"input_std", &Config::input_std},
    ConfigField{"input_corr", &Config::input_corr},
    ConfigField{"encoder_cos", &Config::encoder_cos},
    ConfigField{"input_width", &Config::input_width},
    ConfigField{"vocab", &Config::vocab},
    ConfigField{"loss", &Config::loss},
    ConfigField{"output_width", &Config::output_width},
    ConfigField{"jacobian_probes", &Config::jacobian_probes},
    ConfigField{"update", &Config::update},
    ConfigField{"update_lr", &Config::update_lr},
    ConfigField{"update_scale", &Config::update_scale},
    ConfigField{"adam_eps", &Config::adam_eps},
    ConfigField{"steps", &Config::steps},
    ConfigField{"adam_beta1", &Config::adam_beta1},
    ConfigField{"adam_beta2", &Config::adam_beta2},
    ConfigField{"batches", &Config::batches},
    ConfigField{"seed", &Config::seed},
    ConfigField{"samples", &Config::samples},
    ConfigField{"precision", &Config::precision},
    ConfigField{"recompute", &Config::recompute},
    ConfigField{"metrics", &Config::metrics},
    ConfigField{"label", &Config::label},
};

// f(name, member) for every field, in order.
template <class F>
constexpr void for_each_config_field(F&& f) {
  std::apply([&](const auto&... field) { (f(field.name, field.member), ...); }, kConfigFields);
}

// The key name of `member`; "" for a member no field names.
template <class T>
constexpr std::string_view config_field_name(T Config::*member) {
  std::string_view name;
  for_each_config_field([&](std::string_view n, auto m) {
    if constexpr (std::is_same_v<decltype(m), T Config::*>)
      if (m == member) name = n;
  });
  return name;
}

}  // namespace normsim::sim
