// The table of every Config key and the checks that reject impossible values and combinations.
#include "sim/run/config_schema.hpp"

#include "io/csv_write.hpp"
#include "sim/edges.hpp"

#include "sim/jacobian_wanted.hpp"
#include "sim/metrics.hpp"
#include "sim/parametrization.hpp"
#include "sim/placement.hpp"
#include "sim/placements/expression.hpp"
#include "sim/run/expression_checks.hpp"
#include "sim/run/key_relevance.hpp"
#include "vocab/builtin_parametrizations.hpp"
#include "vocab/closest_name.hpp"
#include "vocab/names.hpp"
#include "vocab/sublayer_layout.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <climits>
#include <cmath>
#include <stdexcept>

namespace normsim::sim {

namespace {

// The placements come from their registry (sim/placements/registry.cpp), in vocab/builtin_blocks.cpp's order.
const std::vector<Choice>& placement_list() {
  static const std::vector<Choice> list = [] {
    std::vector<Choice> out;
    for (const Placement* p : all_placements()) out.push_back(Choice{vocab::name(p->id()), p->summary()});
    const auto custom = vocab::table<vocab::Placement>().back();  // custom: the block from the config
    out.push_back(Choice{custom.name, custom.meaning});
    return out;
  }();
  return list;
}
// The valid names of an enum-valued key, from its vocabulary table (vocab/names.cpp).
template <class E>
std::span<const Choice> vocab_choices() {
  static const std::vector<Choice> list = [] {
    std::vector<Choice> out;
    for (const auto& n : vocab::table<E>()) out.push_back(Choice{n.name, n.meaning});
    return out;
  }();
  return list;
}
const auto kSublayers = vocab_choices<vocab::Sublayer>();
const auto kActivations = vocab_choices<vocab::Activation>();
const auto kNorms = vocab_choices<vocab::Norm>();
const auto kInits = vocab_choices<vocab::Init>();
const auto kFinalNorm = vocab_choices<vocab::FinalNorm>();
const auto kLosses = vocab_choices<vocab::Loss>();
const auto kLogitScalings = vocab_choices<vocab::LogitScaling>();
const auto kAttentionGates = vocab_choices<vocab::AttentionGate>();
const auto kUpdates = vocab_choices<vocab::Update>();
const auto kBatches = vocab_choices<vocab::Batches>();
const auto kPrecisions = vocab_choices<vocab::Precision>();
const auto kRecompute = vocab_choices<vocab::Recompute>();
const auto kMoeGates = vocab_choices<vocab::MoeGate>();
const auto kQkNormScopes = vocab_choices<vocab::QkNormScope>();

// none, the built-in parametrizations (vocab/builtin_parametrizations.cpp), custom.
const std::vector<Choice>& parametrization_list() {
  static const std::vector<Choice> list = [] {
    std::vector<Choice> out{{"none", "the init keys decide every std (no rules)"}};
    for (const auto& p : vocab::builtin_parametrizations()) out.push_back(Choice{p.name, p.source});
    out.push_back(Choice{"custom", "param_rules alone"});
    return out;
  }();
  return list;
}

// The metrics (vocab/metrics.def), as the valid names of the `metrics` key.
const std::vector<Choice>& metric_list() {
  static const std::vector<Choice> list = [] {
    std::vector<Choice> out;
    for (const auto& m : metric_table()) out.push_back(Choice{m.name, m.definition});
    return out;
  }();
  return list;
}

using Check = std::function<std::string(const KeyValue&)>;

std::string joined(const std::vector<std::string>& items, std::string_view sep) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i) s += (i ? std::string(sep) : "") + items[i];
  return s;
}

Check int_at_least(std::int64_t lo) {
  return [lo](const KeyValue& v) -> std::string {
    const auto x = std::get<std::int64_t>(v);
    if (x < lo) return std::to_string(x) + " is out of range (must be >= " + std::to_string(lo) + ")";
    if (x > INT_MAX) return std::to_string(x) + " is too large (must be <= " + std::to_string(INT_MAX) + ")";
    return "";
  };
}

Check int_range(std::int64_t lo, std::int64_t hi) {
  return [lo, hi](const KeyValue& v) -> std::string {
    const auto x = std::get<std::int64_t>(v);
    if (x < lo || x > hi)
      return std::to_string(x) + " is out of range (must be in " + std::to_string(lo) + " .. " +
             std::to_string(hi) + ")";
    return "";
  };
}

Check float_range(double lo, double hi, bool lo_open = false) {
  return [=](const KeyValue& v) -> std::string {
    const double x = std::get<double>(v);
    if (!std::isfinite(x)) return format_value(v) + " is not a finite number";
    if (x < lo || (lo_open && x == lo) || x > hi) {
      std::string range;
      if (std::isinf(hi))
        range = std::string(lo_open ? "> " : ">= ") + io::format_number(lo);
      else
        range = "in [" + io::format_number(lo) + ", " + io::format_number(hi) + "]";
      return io::format_number(x) + " is out of range (must be " + range + ")";
    }
    return "";
  };
}

// An Adam beta: in [0, 1), since beta = 1 leaves the bias correction 1 - beta^t at 0.
Check adam_beta() {
  return [](const KeyValue& v) -> std::string {
    const double x = std::get<double>(v);
    if (std::isfinite(x) && x >= 0 && x < 1) return "";
    return (std::isfinite(x) ? io::format_number(x) + " is out of range"
                             : format_value(v) + " is not a finite number") +
           " (must be in [0, 1): beta = 1 leaves Adam's bias correction 1 - beta^t at 0)";
  };
}

Check any_finite() {
  return float_range(-INFINITY, INFINITY);
}

std::string names_of(std::span<const Choice> choices, std::string_view sep = ", ") {
  std::string s;
  for (const auto& c : choices) {
    if (!s.empty()) s += sep;
    s += c.name;
  }
  return s;
}

Check one_of(std::span<const Choice> choices) {
  return [choices](const KeyValue& v) -> std::string {
    const auto& s = std::get<std::string>(v);
    for (const auto& c : choices)
      if (c.name == s) return "";
    std::vector<std::string_view> names;
    for (const auto& c : choices) names.push_back(c.name);
    std::string hint = vocab::closest_name(s, names);
    return "unknown value '" + s + "' (valid: " + names_of(choices) + ")" +
           (hint.empty() ? "" : "; did you mean '" + hint + "'?");
  };
}

// A list of names, each one of `choices`, at least one.
Check each_one_of(std::span<const Choice> choices) {
  return [choices](const KeyValue& v) -> std::string {
    const auto& names = std::get<std::vector<std::string>>(v);
    if (names.empty()) return "an empty list names nothing (give at least one name)";
    for (const auto& name : names)
      if (std::string why = one_of(choices)(KeyValue(name)); !why.empty()) return why;
    return "";
  };
}

// "" or "rule:value", rule an init rule and value a finite number >= 0 (the gain, or the std for fixed).
std::string check_override(const KeyValue& v) {
  const auto& s = std::get<std::string>(v);
  if (s.empty()) return "";
  const auto colon = s.find(':');
  const std::string usage = "'" + s + "' is not \"\" or \"rule:value\" (e.g. \"fanin:2\" or \"fixed:0.01\")";
  if (colon == std::string::npos) return usage;
  const std::string rule = s.substr(0, colon), number = s.substr(colon + 1);
  if (const std::string bad = one_of(kInits)(KeyValue(rule)); !bad.empty()) return usage + ": rule " + bad;
  double x = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), x);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size())
    return usage + ": '" + number + "' is not a number";
  if (!std::isfinite(x) || x < 0) return usage + ": " + number + " must be a finite number >= 0";
  return "";
}

template <class T>
KeyInfo key(T Config::*member, std::string_view group, std::string_view meaning, std::string_view allowed,
            Check check, std::span<const Choice> choices = {}) {
  KeyInfo k;
  k.name = config_field_name(member);
  k.group = group;
  k.meaning = meaning;
  k.allowed = allowed.empty() ? names_of(choices, " | ") : std::string(allowed);
  k.choices = choices;
  k.check = std::move(check);
  if constexpr (std::is_same_v<T, bool>) {
    k.type = KeyType::boolean;
    k.get = [member](const Config& c) { return KeyValue(c.*member); };
    k.set = [member](Config& c, const KeyValue& v) { c.*member = std::get<bool>(v); };
  } else if constexpr (std::is_same_v<T, std::string>) {
    k.type = KeyType::string;
    k.get = [member](const Config& c) { return KeyValue(c.*member); };
    k.set = [member](Config& c, const KeyValue& v) { c.*member = std::get<std::string>(v); };
  } else if constexpr (std::is_enum_v<T>) {  // a vocabulary name, parsed here once (vocab/names.hpp)
    k.type = KeyType::string;
    k.get = [member](const Config& c) { return KeyValue(std::string(vocab::name(c.*member))); };
    k.set = [member](Config& c, const KeyValue& v) { c.*member = vocab::parse<T>(std::get<std::string>(v)); };
  } else if constexpr (std::is_same_v<T, MetricSet>) {  // metric names, parsed here once into ids
    k.type = KeyType::name_list;
    k.get = [member](const Config& c) { return KeyValue((c.*member).names()); };
    k.set = [member](Config& c, const KeyValue& v) {
      c.*member = MetricSet::of(std::get<std::vector<std::string>>(v));
    };
  } else if constexpr (std::is_same_v<T, double>) {
    k.type = KeyType::floating;
    k.get = [member](const Config& c) { return KeyValue(c.*member); };
    k.set = [member](Config& c, const KeyValue& v) { c.*member = std::get<double>(v); };
  } else {
    static_assert(std::is_integral_v<T>);
    k.type = KeyType::integer;
    k.get = [member](const Config& c) { return KeyValue(static_cast<std::int64_t>(c.*member)); };
    k.set = [member](Config& c, const KeyValue& v) { c.*member = static_cast<T>(std::get<std::int64_t>(v)); };
  }
  return k;
}

KeyInfo when_set(KeyInfo k) {
  k.when_set = true;
  return k;
}

Check any() {
  return [](const KeyValue&) { return std::string(); };
}

std::vector<KeyInfo> make_table() {
  const std::string_view ov = "\"\" or \"rule:value\", rule fanin | xavier | fixed | unit, value >= 0";
  const auto override_key = [&](std::string Config::*m, std::string_view meaning) {
    return key(m, "init", meaning, ov, check_override);
  };
  return {
      key(&Config::sublayer, "model", "branch kind of every sublayer",
          "mlp | attention | transformer | decoder", one_of(kSublayers), kSublayers),
      key(&Config::placement, "model", "where the norms sit (see `normsim list placements`)", "",
          one_of(placement_list()), placement_list()),
      key(&Config::norm, "model", "the norm used by the placement", "layernorm | rmsnorm | dyt | derf",
          one_of(kNorms), kNorms),
      key(&Config::norm_alpha, "model",
          "dyt, derf: alpha of the norms of sublayer k; 0.5 is both codes' alpha_init_value (jiachenzhu/DyT "
          "dynamic_tanh.py L7, zlab-princeton/Derf ViT/dynamic_erf.py L7); DyT's LLaMA-7B recipe is "
          "\"attention ? 0.8 : 0.2\" with final_norm_alpha = 0.2 (other_tasks/LLaMA/README.md L61-63)",
          "an expression of numbers, k, K, b, L, attention and numeric keys", check_scalar_expression),
      key(&Config::norm_shift, "model",
          "derf: the shift s inside erf(alpha x + s) of the norms of sublayer k (Derf's shift_init_value 0)",
          "an expression of numbers, k, K, b, L, attention and numeric keys", check_scalar_expression),
      key(&Config::final_norm_alpha, "model",
          "dyt, derf: alpha of the final norm and of the decoder's encoder output", "finite", any_finite()),
      key(&Config::final_norm_shift, "model",
          "derf: shift of the final norm and of the decoder's encoder output", "finite", any_finite()),
      key(&Config::norm_eps, "model", "epsilon inside the norm's square root", ">= 0",
          float_range(0, INFINITY)),
      key(&Config::norm_gain, "model", "gain (gamma) of every norm at init; its bias is 0", "> 0",
          float_range(0, INFINITY, /*lo_open=*/true)),
      key(&Config::width, "model", "d, the width of the residual stream", ">= 1", int_at_least(1)),
      key(&Config::tokens, "model", "T, the number of tokens (rows of the stream)", ">= 1", int_at_least(1)),
      key(&Config::depth, "model", "K, the number of residual sublayers",
          ">= 1; even for transformer, b2t, spannorm; a multiple of 3 for decoder", int_at_least(1)),
      key(&Config::mlp_ratio, "model", "MLP hidden width = round(mlp_ratio * width)",
          "> 0, hidden width >= 1", float_range(0, INFINITY, true)),
      key(&Config::activation, "model", "MLP activation", "relu | gelu | silu | tanh | linear | swiglu",
          one_of(kActivations), kActivations),
      key(&Config::moe_experts, "model",
          "E: every MLP branch is a routed MLP (mixture of experts) of E experts, each the MLP above, with a "
          "router Wr (width x E) sending each token to the top moe_top_k of softmax(u Wr) (Mixtral's "
          "num_local_experts; docs/conventions.md); 0: the dense MLP",
          "0 .. 65536", int_range(0, 65536)),
      key(&Config::moe_top_k, "model",
          "k: experts per token of a routed MLP (Mixtral's num_experts_per_tok = 2)", "1 .. moe_experts",
          int_at_least(1)),
      key(&Config::moe_gate, "model", "the routed MLP's gate of a selected expert", "renormalized | softmax",
          one_of(kMoeGates), kMoeGates),
      key(&Config::heads, "model", "attention heads (head size width / heads)",
          ">= 1, divides width (attention, transformer, decoder)", int_at_least(1)),
      key(&Config::causal, "model", "causal attention mask (token t sees s <= t)", "true | false", any()),
      key(&Config::qk_norm, "model",
          "norm (the configured norm, gain norm_gain) of Q and K before the logits, over each head's d/heads "
          "or the whole d (qk_norm_scope), in every attention (Fqkv's are normalized already)",
          "true | false", any()),
      when_set(
          key(&Config::qk_norm_scope, "model",
              "what qk_norm normalizes: each head's slice of Q and K, or the whole projection before the "
              "head split (OLMo-2's q_norm, k_norm over d)",
              "head | projection", one_of(kQkNormScopes), kQkNormScopes)),
      key(&Config::logit_scaling, "model",
          "attention logits q.k divided by sqrt(d_h) or, muP's rule, by d_h (d_h = width / heads)",
          "sqrt | mup", one_of(kLogitScalings), kLogitScalings),
      key(&Config::attention_temperature, "model",
          "attention logits divided by this as well (1: none; large: attention near uniform)", "> 0",
          float_range(0, INFINITY, /*lo_open=*/true)),
      key(&Config::attention_gate, "model",
          "gated attention (Qiu et al. 2025): each self-attention's output o, before W_O, times "
          "sigmoid(u W_g), u the branch input; one gate per coordinate (W_g d x d) or per head (d x heads); "
          "W_g drawn as wq (init_wga)",
          "none | elementwise | headwise", one_of(kAttentionGates), kAttentionGates),
      key(&Config::final_norm, "model", "norm mapping x_K to the output y",
          "auto | true | false (auto: when the placement does not end in a norm)", one_of(kFinalNorm),
          kFinalNorm),
      key(&Config::input_norm, "model", "x_0 = N(input) (Peri-LN's embedding norm)", "true | false", any()),
      key(&Config::block, "placement",
          "placement = \"custom\": what a sublayer computes, e.g. \"x + N(F(x))\" (docs/placements.md)",
          "\"\" or an expression of x, N, F, ...; two separated by ';' for a pair", check_block),
      key(&Config::branch_scale, "placement",
          "multiplies every branch output, any placement, e.g. \"1/sqrt(K)\" (docs/placements.md)",
          "an expression of numbers, k, K, b, L and numeric keys", check_scalar_expression),
      key(&Config::mix_fraction, "placement", "Mix-LN: fraction of blocks that are Post-LN", "[0, 1]",
          float_range(0, 1)),
      key(&Config::deepnorm_alpha, "placement", "DeepNorm's alpha; 0: K^(1/4) from depth", ">= 0",
          float_range(0, INFINITY)),
      key(&Config::deepnorm_beta, "placement", "DeepNorm's beta; 0: (4K)^(-1/4) from depth", ">= 0",
          float_range(0, INFINITY)),
      key(&Config::rezero_alpha, "placement", "ReZero's branch scale at init", "finite", any_finite()),
      key(&Config::spannorm_lambda, "placement", "SpanNorm's branch scale lambda", "finite", any_finite()),
      key(&Config::init, "init", "init rule of every weight matrix", "fanin | xavier | fixed | unit",
          one_of(kInits), kInits),
      key(&Config::init_gain, "init",
          "fanin: variance gain^2/fan_in; xavier: 2 gain^2/(in+out); unit: every vector along the embedding "
          "dimension of length gain (nGPT)",
          ">= 0", float_range(0, INFINITY)),
      key(&Config::init_std, "init", "fixed: the std of every weight", ">= 0", float_range(0, INFINITY)),
      key(&Config::scaled_output, "init",
          "divide the std of w2 and wo by sqrt(K) (CogView/Megatron scaled init)", "true | false", any()),
      key(&Config::placement_init, "init",
          "apply the placement's prescribed init: DeepNorm's beta, B2T's (K/2)^(-1/2) on every weight "
          "((K/3)^(-1/2) on a decoder) "
          "(docs/placements.md)",
          "true | false", any()),
      override_key(&Config::init_w1, "init of w1 (MLP input; SwiGLU up), overriding init"),
      override_key(&Config::init_w2, "init of w2 (MLP output), overriding init"),
      override_key(&Config::init_wgate, "init of wgate (SwiGLU gate), overriding init"),
      override_key(&Config::init_wq, "init of wq (attention query; the decoder's cq too), overriding init"),
      override_key(&Config::init_wk, "init of wk (attention key; the decoder's ck too), overriding init"),
      override_key(&Config::init_wv, "init of wv (attention value; the decoder's cv too), overriding init"),
      override_key(&Config::init_wo, "init of wo (attention output; the decoder's co too), overriding init"),
      override_key(&Config::init_wga,
                   "init of wga (attention_gate's W_g), overriding init; \"\": init_wq's when that is set"),
      override_key(&Config::init_wrouter,
                   "init of wrouter (a routed MLP's router, width x moe_experts), overriding init; Mixtral's "
                   "is \"fixed:0.02\" (initializer_range)"),
      when_set(key(&Config::parametrization, "init",
                   "every matrix's init std and multiplier and the branch multiplier as rules of width and "
                   "depth: a preset (`normsim list parametrizations`), custom (param_rules alone) or none",
                   "", one_of(parametrization_list()), parametrization_list())),
      when_set(key(&Config::param_rules, "init",
                   "rules after the preset's, e.g. \"hidden: std = 1 / sqrt(fan_in); branch: mult = "
                   "m_L^-0.5\" (docs/parametrizations.md)",
                   "\"\" or rules \"selector ...: field = expression, ...; ...\"", check_param_rules)),
      when_set(key(&Config::base_width, "init",
                   "a parametrization's base width: m_N = width / base_width (nanoGPT-mup's 256)", ">= 1",
                   int_at_least(1))),
      when_set(key(&Config::base_depth, "init",
                   "a parametrization's base depth in sublayers: m_L = depth / base_depth (CompleteP's 2 "
                   "blocks)",
                   ">= 1", int_at_least(1))),
      when_set(
          key(&Config::bias, "init",
              "a bias on every weight matrix (MLP w1, w2, wgate; attention wq, wk, wv, wo, the decoder's "
              "cq, ck, cv, co; attention_gate's wga), as nanoGPT's bias = True (GPT-2); a routed MLP's "
              "router has none (Mixtral's and OLMoE's gate is bias-free); the norms have no bias; "
              "updates move the biases too",
              "true | false", any())),
      when_set(
          key(&Config::init_bias, "init",
              "bias = true: the std sigma_b of every bias entry, N(0, sigma_b^2); 0: zero (nanoGPT's and "
              "HF GPT-2's init)",
              ">= 0", float_range(0, INFINITY))),
      key(&Config::input_std, "input", "std of every input coordinate", ">= 0", float_range(0, INFINITY)),
      key(&Config::input_corr, "input", "correlation between the input's tokens", "[0, 1]",
          float_range(0, 1)),
      key(&Config::encoder_cos, "input",
          "decoder: correlation between the tokens of the fixed encoder output (before its norm)", "[0, 1]",
          float_range(0, 1)),
      when_set(key(&Config::input_width, "input",
                   "an embedding matrix W_emb (input_width x width): x_0 = u W_emb of a Gaussian u of "
                   "input_width coordinates (input_std, input_corr); 0: x_0 is drawn (sim/edges.hpp)",
                   ">= 0", int_at_least(0))),
      when_set(
          key(&Config::vocab, "input",
              "a token embedding W_emb (vocab x width): x_0[t] = W_emb[id_t], ids uniform in [0, vocab); "
              "0: none",
              ">= 0", int_at_least(0))),
      key(&Config::loss, "backward", "loss whose gradient is propagated", "readout | mse", one_of(kLosses),
          kLosses),
      when_set(key(&Config::output_width, "backward",
                   "a readout matrix W_out (width x output_width): the loss reads the logits z = y W_out; 0: "
                   "it reads y",
                   ">= 0", int_at_least(0))),
      key(&Config::jacobian_probes, "backward",
          "random probes per Jacobian metric (jac_sq, jac_spread, block_identity_dev, computed only when "
          "`metrics` names them); about 2 x probes extra backward passes (CUDA: each with a forward pass)",
          ">= 2", int_at_least(2)),
      key(&Config::update, "update",
          "parameter update W -> W + dW whose effect output_change measures (sim/cpu/weight_update.hpp)",
          "none | random | sgd | adam", one_of(kUpdates), kUpdates),
      key(&Config::update_lr, "update",
          "sgd, adam: learning rate of the one step, or of every step (steps > 0)", "> 0",
          float_range(0, INFINITY, true)),
      key(&Config::update_scale, "update", "random: ||dW||_F / ||W||_F of every matrix", "> 0",
          float_range(0, INFINITY, true)),
      when_set(key(&Config::adam_eps, "update",
                   "adam: epsilon, in lr m^ / (sqrt(v^) + eps) (Kingma & Ba 2015's 1e-8; steps = 0: the one "
                   "step lr g / (|g| + eps)); a parametrization's eps rules read it",
                   "> 0", float_range(0, INFINITY, true))),
      when_set(key(&Config::steps, "update",
                   "training steps of `update` (sgd or adam) after init, every metric measured at steps 0 "
                   "to `steps` (a step column in the result files); 0: the one update output_change measures",
                   "0 to 1000", int_range(0, kMaxSteps))),
      when_set(key(&Config::adam_beta1, "update",
                   "steps > 0, adam: decay of the first moment m (Kingma & Ba 2015's 0.9)", "[0, 1)",
                   adam_beta())),
      when_set(key(&Config::adam_beta2, "update",
                   "steps > 0, adam: decay of the second moment v (Kingma & Ba 2015's 0.999; CompleteP's "
                   "run.sh l.37: 0.95)",
                   "[0, 1)", adam_beta())),
      when_set(key(&Config::batches, "update",
                   "steps > 0: the batch each step reads: fixed (batch 0 every step, microsoft/mup's "
                   "fix_data) or fresh (new input, readout direction and target per step)",
                   "fixed | fresh", one_of(kBatches), kBatches)),
      key(&Config::seed, "run", "base seed; weights are a function of (seed, sample, layer, matrix)", ">= 0",
          int_at_least(0)),
      key(&Config::samples, "run", "independent initializations per configuration", ">= 1", int_at_least(1)),
      key(&Config::precision, "run", "floating-point type of the simulation",
          "float32 | float64 | tf32 | bf16 (tf32: CUDA backend and reference device; bf16: MLP sublayers)",
          one_of(kPrecisions), kPrecisions),
      key(&Config::recompute, "run",
          "draw weights again in the backward instead of storing them (memory for time; CPU and CUDA)",
          "auto | true | false", one_of(kRecompute), kRecompute),
      key(&Config::metrics, "run",
          "the metrics computed and written, a list that does not sweep (default: every metric not marked "
          "costly in `normsim list metrics`)",
          "a list of metric names (`normsim list metrics`)", each_one_of(metric_list()), metric_list()),
      when_set(key(&Config::label, "run",
                   "the configuration's name in figures and legends (no effect on the numbers); `variants` "
                   "sets one per variant (experiments/README.md, \"Variants\")",
                   "any text", any())),
  };
}

// The rows in the order of the Config's fields (sim/config.hpp, kConfigFields), which every reader of the
// table follows; a field without a row, or a row of a member no field names, is a mistake of this file.
std::vector<KeyInfo> in_field_order(const std::vector<KeyInfo>& rows) {
  std::vector<KeyInfo> table;
  for_each_config_field([&](std::string_view name, auto) {
    const auto row = std::find_if(rows.begin(), rows.end(), [&](const KeyInfo& k) { return k.name == name; });
    if (row == rows.end())
      throw std::logic_error("config_schema.cpp: no row for the key '" + std::string(name) + "'");
    table.push_back(*row);
  });
  if (table.size() != rows.size())
    throw std::logic_error(
        "config_schema.cpp: a row for a member that sim/config.hpp's kConfigFields does not name");
  return table;
}

}  // namespace

std::span<const KeyInfo> config_keys() {
  static const std::vector<KeyInfo> table = in_field_order(make_table());
  return table;
}

const KeyInfo* find_key(std::string_view name) {
  for (const auto& k : config_keys())
    if (k.name == name) return &k;
  return nullptr;
}

std::string suggest_key(std::string_view name) {
  std::vector<std::string_view> names;
  for (const auto& k : config_keys()) names.push_back(k.name);
  return vocab::closest_name(name, names);
}

std::span<const Choice> placement_choices() {
  return placement_list();
}
std::span<const Choice> sublayer_choices() {
  return kSublayers;
}
std::span<const Choice> activation_choices() {
  return kActivations;
}
std::span<const Choice> norm_choices() {
  return kNorms;
}
std::span<const Choice> init_choices() {
  return kInits;
}
std::span<const Choice> parametrization_choices() {
  return parametrization_list();
}

std::optional<KeyValue> coerce(const KeyInfo& key, const KeyValue& value) {
  switch (key.type) {
    case KeyType::boolean:
      if (std::holds_alternative<bool>(value)) return value;
      break;
    case KeyType::integer:
      if (std::holds_alternative<std::int64_t>(value)) return value;
      break;
    case KeyType::floating:
      if (std::holds_alternative<double>(value)) return value;
      if (const auto* i = std::get_if<std::int64_t>(&value)) return KeyValue(static_cast<double>(*i));
      break;
    case KeyType::string:
      if (std::holds_alternative<std::string>(value)) return value;
      if (const auto* b = std::get_if<bool>(&value)) {
        const std::string_view name = *b ? "true" : "false";
        for (const auto& c : key.choices)
          if (c.name == name) return KeyValue(std::string(name));
      }
      break;
    case KeyType::name_list:
      if (std::holds_alternative<std::vector<std::string>>(value)) return value;
      if (const auto* s = std::get_if<std::string>(&value)) return KeyValue(std::vector<std::string>{*s});
      break;
  }
  return std::nullopt;
}

std::string_view type_name(KeyType type) {
  switch (type) {
    case KeyType::boolean:
      return "boolean";
    case KeyType::integer:
      return "integer";
    case KeyType::floating:
      return "float";
    case KeyType::string:
      return "string";
    case KeyType::name_list:
      return "list of names";
  }
  return "?";
}

std::string_view type_name(const KeyValue& value) {
  constexpr std::array<std::string_view, 5> names{"boolean", "integer", "float", "string", "list"};
  return names[value.index()];
}

std::string format_value(const KeyValue& value) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, bool>)
          return v ? "true" : "false";
        else if constexpr (std::is_same_v<T, std::int64_t>)
          return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>)
          return io::format_number(v);  // a CSV column too: never 19016889231223029760 for 1.9e19 (issue 30)
        else if constexpr (std::is_same_v<T, std::string>)
          return v;
        else
          return "[" + joined(v, ", ") + "]";
      },
      value);
}

std::string format_toml(const KeyValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return "\"" + *s + "\"";
  if (const auto* names = std::get_if<std::vector<std::string>>(&value))
    return names->empty() ? "[]" : "[\"" + joined(*names, "\", \"") + "\"]";
  if (const auto* d = std::get_if<double>(&value)) {
    std::string s = io::format_number(*d);
    if (std::isfinite(*d) && s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
  }
  return format_value(value);
}

namespace {
// Why a depth is refused by the sublayer kind's block: " is odd; ..." or " is not a multiple of 3; ...".
std::string block_rule(const vocab::SublayerLayout& layout) {
  std::string branches;
  for (int j = 0; j < layout.size; ++j)
    branches += (j ? ", " : "") + std::string(vocab::branch_name(layout.branch_at(j)));
  return (layout.size == 2 ? " is odd" : " is not a multiple of " + std::to_string(layout.size)) +
         "; sublayer = \"" + std::string(vocab::name(layout.kind)) + "\" runs " +
         std::to_string(layout.size) + " sublayers in every block (" + branches + ")";
}
}  // namespace

namespace {
// The combinations the edge matrices (sim/edges.hpp) refuse.
std::vector<ConfigIssue> edge_issues(const Config& c) {
  std::vector<ConfigIssue> issues;
  if (c.input_width > 0 && c.vocab > 0)
    issues.push_back({"vocab",
                      "an embedding reads token ids (vocab) or a Gaussian input (input_width), not both",
                      {"input_width"}});
  const bool edges = has_embedding(c) || has_readout(c);
  if (edges && c.init == vocab::Init::unit)
    issues.push_back({"init",
                      "init = \"unit\" normalizes the sublayers' matrices; unit-norm embedding and readout "
                      "matrices (nGPT) are not built: use another init",
                      {has_embedding(c) ? (c.vocab > 0 ? "vocab" : "input_width") : "output_width"}});
  return issues;
}
}  // namespace

std::vector<ConfigIssue> validate(const Config& c) {
  std::vector<ConfigIssue> issues;
  for (const auto& k : config_keys())
    if (std::string why = k.check(k.get(c)); !why.empty()) issues.push_back({std::string(k.name), why, {}});
  if (!issues.empty()) return issues;  // the combinations below assume every key is valid on its own

  const vocab::SublayerLayout& layout = vocab::layout(c.sublayer);
  const bool attention = layout.has_attention(), mlp = layout.has(vocab::BranchKind::mlp);
  if (attention && c.width % c.heads != 0)
    issues.push_back({"heads",
                      std::to_string(c.heads) + " does not divide width " + std::to_string(c.width),
                      {"width", "sublayer"}});
  if (c.placement == vocab::Placement::custom && c.block.empty()) {
    issues.push_back(
        {"block", "placement = \"custom\" needs a block expression, e.g. \"x + N(F(x))\"", {"placement"}});
    return issues;  // the checks below read the placement's block
  }
  const std::string depth = "depth " + std::to_string(c.depth);
  if (c.depth % layout.size != 0)
    issues.push_back({"depth", depth + block_rule(layout), {"sublayer"}});
  else if (c.depth % vocab::unit_sublayers(placement_for(c)->span(), c.sublayer) != 0)
    issues.push_back({"depth",
                      depth + " is odd; placement = \"" + std::string(vocab::name(c.placement)) +
                          "\" pairs sublayers and needs it even",
                      {"placement"}});
  if (placement_for(c)->lanes() > 1 && JacobianWanted::of(c.metrics).any())
    issues.push_back({"metrics",
                      "jac_sq, jac_spread and block_identity_dev are Jacobians between single streams, not "
                      "defined on a block of lanes yet (docs/design/multistream.md 3.3); leave them out",
                      {"block"}});
  if (vocab::is_pointwise(c.norm) && c.qk_norm && attention)
    issues.push_back({"qk_norm",
                      "qk_norm normalizes each head's Q and K with the configured norm, which for norm = \"" +
                          std::string(vocab::name(c.norm)) + "\" is not implemented (layernorm or rmsnorm)",
                      {"norm"}});
  if (mlp && std::lround(c.mlp_ratio * c.width) < 1)
    issues.push_back(
        {"mlp_ratio",
         "hidden width round(" + io::format_number(c.mlp_ratio) + " * " + std::to_string(c.width) + ") is 0",
         {"width"}});
  if (c.moe_experts > 0 && mlp) {
    if (c.moe_top_k > c.moe_experts)
      issues.push_back({"moe_top_k",
                        std::to_string(c.moe_top_k) + " exceeds moe_experts " + std::to_string(c.moe_experts),
                        {"moe_experts"}});
    if (c.update != vocab::Update::none)
      issues.push_back(
          {"update",
           "a parameter update of a routed MLP (moe_experts > 0) is not implemented: its experts' "
           "matrices share one weight kind",
           {"moe_experts"}});
  }
  if (c.steps > 0 && c.update != vocab::Update::sgd && c.update != vocab::Update::adam)
    issues.push_back(
        {"steps",
         "training steps are steps of an optimizer on the loss: set update = \"sgd\" or \"adam\"",
         {"update"}});
  if (c.steps > 0 && uses_init_rule(c, vocab::Init::unit))
    issues.push_back(
        {"steps",
         "nGPT renormalizes its unit-norm matrices after every optimizer step (NVIDIA/ngpt train.py "
         "L394-408, called at L500); normsim's steps do not, so a stack drawn with init \"unit\" is not "
         "trained as nGPT: use another init, or steps = 0",
         {"init"}});
  if (c.steps == 0)
    for (int m = 0; m < metric::count; ++m)
      if (is_train_metric(m) && c.metrics.contains(m)) {
        issues.push_back({"metrics",
                          std::string(metric_table()[m].name) +
                              " is measured by the training loop only: set steps >= 1 (with update = \"sgd\" "
                              "or \"adam\"; docs/metrics.md)",
                          {"steps"}});
        break;
      }
  for (auto& i : edge_issues(c)) issues.push_back(std::move(i));
  for (auto& i : size_issues(c)) issues.push_back(std::move(i));
  if (!issues.empty()) return issues;  // a parametrization resolves its rules on a valid stack
  return parametrization_issues(c);
}

namespace {
// Largest entries of one drawn matrix: the Philox counter addresses blocks of 4 draws with 32 bits.
constexpr double kMaxMatrixEntries = 4.0 * 4294967296.0;
}  // namespace

std::vector<ConfigIssue> size_issues(const Config& c) {
  std::vector<ConfigIssue> issues;
  const double hidden = std::round(c.mlp_ratio * c.width);
  const std::string mlp = io::format_number(c.mlp_ratio) + " * " + std::to_string(c.width);
  const vocab::SublayerLayout& layout = vocab::layout(c.sublayer);
  const bool has_mlp = layout.has(vocab::BranchKind::mlp);
  if (has_mlp && hidden > INT_MAX)
    issues.push_back({"mlp_ratio",
                      "hidden width round(" + mlp + ") = " + io::format_number(hidden) +
                          " exceeds the largest size " + std::to_string(INT_MAX),
                      {"width"}});
  else if (has_mlp && hidden * c.width > kMaxMatrixEntries)
    issues.push_back({"width",
                      "an MLP matrix of width " + std::to_string(c.width) + " x hidden " +
                          io::format_number(hidden) + " (mlp_ratio " + io::format_number(c.mlp_ratio) +
                          ") has more than 2^34 entries, the most the weight draws can address",
                      {"mlp_ratio"}});
  if (double(c.width) * c.width > kMaxMatrixEntries && layout.has_attention())
    issues.push_back({"width",
                      "an attention matrix of " + std::to_string(c.width) + " x " + std::to_string(c.width) +
                          " has more than 2^34 entries, the most the weight draws can address",
                      {"sublayer"}});
  if (double(c.tokens) * c.width > kMaxMatrixEntries)
    issues.push_back({"tokens",
                      std::to_string(c.tokens) + " tokens x width " + std::to_string(c.width) +
                          " has more than 2^34 entries, the most the input draws can address",
                      {"width"}});
  for (const Edge e : {Edge::embedding, Edge::readout}) {
    const EdgeDims d = edge_dims(c, e);
    if (has_edge(c, e) && double(d.rows) * d.cols > kMaxMatrixEntries)
      issues.push_back({e == Edge::readout ? "output_width"
                        : c.vocab > 0      ? "vocab"
                                           : "input_width",
                        "the " + std::string(edge_name(e)) + " matrix of " + std::to_string(d.rows) + " x " +
                            std::to_string(d.cols) +
                            " has more than 2^34 entries, the most the draws can address",
                        {"width"}});
  }
  return issues;
}

}  // namespace normsim::sim
