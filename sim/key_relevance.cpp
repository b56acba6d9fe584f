#include "sim/key_relevance.hpp"

#include <array>

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
  return c.init == rule && !all_overridden;
}

// Placement parameters: the placement that reads each one.
std::string placement_parameter(std::string_view key, const Config& c) {
  constexpr std::array<std::pair<std::string_view, std::string_view>, 5> owner{{
      {"deepnorm_alpha", "deepnorm"},
      {"deepnorm_beta", "deepnorm"},
      {"mix_fraction", "mix"},
      {"rezero_alpha", "rezero"},
      {"spannorm_lambda", "spannorm"},
  }};
  for (const auto& [k, p] : owner)
    if (k == key && c.placement != p)
      return "placement = " + quoted(c.placement) + " does not read it (only " + quoted(std::string(p)) + ")";
  return "";
}

}  // namespace

std::string why_key_unused(std::string_view key, const Config& c) {
  if (std::string why = placement_parameter(key, c); !why.empty()) return why;
  const bool attention = c.sublayer != "mlp", mlp = c.sublayer != "attention";
  if ((key == "heads" || key == "causal") && !attention)
    return "sublayer = " + quoted(c.sublayer) + " has no attention";
  if ((key == "mlp_ratio" || key == "activation") && !mlp) return "sublayer = \"attention\" has no MLP";
  if (key == "init_std" && !uses_rule(c, "fixed")) return "no matrix is drawn with the \"fixed\" rule";
  if (key == "init_gain" && !uses_rule(c, "fanin") && !uses_rule(c, "xavier"))
    return "no matrix is drawn with the \"fanin\" or \"xavier\" rule";
  if ((key == "init_wq" || key == "init_wk" || key == "init_wv" || key == "init_wo") && !attention)
    return "sublayer = " + quoted(c.sublayer) + " has no attention matrices";
  if ((key == "init_w1" || key == "init_w2") && !mlp) return "sublayer = \"attention\" has no MLP matrices";
  if (key == "init_wgate" && (!mlp || c.activation != "swiglu"))
    return "only activation = \"swiglu\" has a gate";
  if (key == "input_corr" && c.tokens < 2) return "one token has no correlation between tokens";
  return "";
}

}  // namespace normsim::sim
