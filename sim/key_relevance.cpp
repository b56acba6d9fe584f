#include "sim/key_relevance.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "sim/placement.hpp"
#include "vocab/block_expr.hpp"
#include "vocab/names.hpp"

namespace normsim::sim {

namespace {

std::string quoted(const std::string& s) {
  return "\"" + s + "\"";
}

// Whether any weight matrix is drawn with `rule` (the init key or a per-matrix override "rule:value").
bool uses_rule(const Config& c, std::string_view rule) {
  const std::array overrides{&c.init_w1, &c.init_w2, &c.init_wgate, &c.init_wq,
                             &c.init_wk, &c.init_wv, &c.init_wo};
  bool all_overridden = true;
  for (const std::string* o : overrides) {
    if (o->empty())
      all_overridden = false;
    else if (o->starts_with(std::string(rule) + ":"))
      return true;
  }
  return c.init == vocab::parse<vocab::Init>(rule) && !all_overridden;
}

// Whether the placement's block expression or branch_scale names `key` (DeepNorm's init rule reads beta).
bool expressions_read(std::string_view key, const Config& c) {
  if (key == "deepnorm_beta" && c.placement == vocab::Placement::deepnorm) return true;
  try {
    std::vector<std::string> names = vocab::params(vocab::parse_scalar(c.branch_scale));
    if (c.placement != vocab::Placement::admin)
      for (const vocab::Expr& e : vocab::parse_block(placement_for(c)->expression()).sublayers)
        for (std::string& n : vocab::params(e)) names.push_back(std::move(n));
    return std::find(names.begin(), names.end(), key) != names.end();
  } catch (const std::invalid_argument&) {
    return true;  // an expression that does not parse is reported by validation, not here
  }
}

// Placement parameters: the built-in placement whose expression reads each one.
std::string placement_parameter(std::string_view key, const Config& c) {
  constexpr std::array<std::pair<std::string_view, std::string_view>, 6> owner{{
      {"deepnorm_alpha", "deepnorm"},
      {"deepnorm_beta", "deepnorm"},
      {"mix_fraction", "mix"},
      {"rezero_alpha", "rezero"},
      {"spannorm_lambda", "spannorm"},
      {"block", "custom"},
  }};
  for (const auto& [k, p] : owner)
    if (k == key && !(key == "block" ? c.placement == vocab::Placement::custom : expressions_read(key, c)))
      return "placement = " + quoted(std::string(vocab::name(c.placement))) + " does not read it (only " +
             quoted(std::string(p)) + ")";
  return "";
}

}  // namespace

std::string why_key_unused(std::string_view key, const Config& c) {
  if (std::string why = placement_parameter(key, c); !why.empty()) return why;
  const bool attention = c.sublayer != vocab::Sublayer::mlp, mlp = c.sublayer != vocab::Sublayer::attention;
  if ((key == "heads" || key == "causal") && !attention)
    return "sublayer = " + quoted(std::string(vocab::name(c.sublayer))) + " has no attention";
  if ((key == "mlp_ratio" || key == "activation") && !mlp) return "sublayer = \"attention\" has no MLP";
  if (key == "init_std" && !uses_rule(c, "fixed")) return "no matrix is drawn with the \"fixed\" rule";
  if (key == "init_gain" && !uses_rule(c, "fanin") && !uses_rule(c, "xavier"))
    return "no matrix is drawn with the \"fanin\" or \"xavier\" rule";
  if ((key == "init_wq" || key == "init_wk" || key == "init_wv" || key == "init_wo") && !attention)
    return "sublayer = " + quoted(std::string(vocab::name(c.sublayer))) + " has no attention matrices";
  if ((key == "init_w1" || key == "init_w2") && !mlp) return "sublayer = \"attention\" has no MLP matrices";
  if (key == "init_wgate" && (!mlp || c.activation != vocab::Activation::swiglu))
    return "only activation = \"swiglu\" has a gate";
  if (key == "input_corr" && c.tokens < 2) return "one token has no correlation between tokens";
  return "";
}

}  // namespace normsim::sim
