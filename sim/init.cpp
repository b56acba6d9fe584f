#include "sim/init.hpp"

#include "sim/parametrization.hpp"
#include "vocab/names.hpp"

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

namespace normsim::sim {

InitRule parse_init_override(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos)
    throw std::invalid_argument("expected \"rule:value\" (e.g. \"fanin:2\"), got \"" + std::string(text) +
                                "\"");
  const std::optional<vocab::Init> rule = vocab::find<vocab::Init>(text.substr(0, colon));
  if (!rule)
    throw std::invalid_argument("unknown init rule '" + std::string(text.substr(0, colon)) +
                                "' (fanin, xavier, fixed, unit)");
  const std::string number(text.substr(colon + 1));
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != number.size() || number.empty() || !(value >= 0) || !std::isfinite(value))
    throw std::invalid_argument("init value '" + number + "' is not a non-negative number");
  return {*rule, value};
}

namespace {
const std::string& override_for(const Config& c, WeightKind w) {
  switch (w) {
    case WeightKind::w1:
      return c.init_w1;
    case WeightKind::w2:
      return c.init_w2;
    case WeightKind::wgate:
      return c.init_wgate;
    case WeightKind::wq:
    case WeightKind::cq:  // the cross-attention shares the attention overrides
      return c.init_wq;
    case WeightKind::wk:
    case WeightKind::ck:
      return c.init_wk;
    case WeightKind::wv:
    case WeightKind::cv:
      return c.init_wv;
    case WeightKind::wo:
    case WeightKind::co:
      return c.init_wo;
    case WeightKind::wga:  // the official gate is columns of q_proj: W_Q's init unless init_wga says
      return c.init_wga.empty() ? c.init_wq : c.init_wga;
    case WeightKind::wrouter:
      return c.init_wrouter;
  }
  return c.init_w1;
}

// The rule matrix w is drawn with: its override, else the init key's.
InitRule rule_of(const Config& c, WeightKind w) {
  const std::string& over = override_for(c, w);
  if (!over.empty()) return parse_init_override(over);
  return {c.init, c.init == vocab::Init::fixed ? c.init_std : c.init_gain};
}

// The matrices that write the stream (fan_out = d): W_2, W_O and the decoder's C_O.
bool is_output_matrix(WeightKind w) {
  return w == WeightKind::w2 || w == WeightKind::wo || w == WeightKind::co;
}

// The init keys' std (no parametrization, or no rule setting this matrix's std).
double init_keys_std(const StackShape& s, const Placement& p, WeightKind w) {
  const Config& c = s.cfg;
  const InitRule rule = rule_of(c, w);
  const double fan_in = s.fan_in(w), fan_out = s.fan_out(w);
  double std = 0;
  switch (rule.rule) {
    case vocab::Init::fanin:
      std = rule.value / std::sqrt(fan_in);
      break;
    case vocab::Init::xavier:
      std = rule.value * std::sqrt(2.0 / (fan_in + fan_out));
      break;
    case vocab::Init::fixed:
      std = rule.value;
      break;
    case vocab::Init::unit:  // the entries' std that gives each vector of n entries length gain in mean
                             // square
      std = rule.value / std::sqrt(is_output_matrix(w) ? fan_out : fan_in);
      break;
  }
  if (c.scaled_output && is_output_matrix(w)) std /= std::sqrt(double(s.depth));
  if (c.placement_init) std *= p.init_multiplier(s, w);
  return std;
}

// Whether a parametrization rule sets matrix w's std at sublayer k (then it, not the init keys, decides).
bool rule_sets_std(const StackShape& s, int k, WeightKind w) {
  return s.rules && s.rules->at(k, w).std.has_value();
}
}  // namespace

double weight_std(const StackShape& s, const Placement& p, int k, WeightKind w) {
  if (!s.rules) return init_keys_std(s, p, w);
  const MatrixRule& r = s.rules->at(k, w);
  return (r.std ? *r.std : init_keys_std(s, p, w)) * r.mult;
}

std::optional<UnitNorm> unit_norm(const StackShape& s, const Placement& p, int k, WeightKind w) {
  if (rule_of(s.cfg, w).rule != vocab::Init::unit || rule_sets_std(s, k, w)) return std::nullopt;
  const bool columns = !is_output_matrix(w);
  return UnitNorm{columns, weight_std(s, p, k, w) * std::sqrt(double(columns ? s.fan_in(w) : s.fan_out(w)))};
}

bool has_bias(const Config& c, WeightKind w) {
  return c.bias && w != WeightKind::wrouter;
}

double bias_std(const Config& c) {
  return c.init_bias;
}

}  // namespace normsim::sim
