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

// Each kind's row of vocab/weight_kinds.hpp that init reads: its init override key and whether it has a bias.
struct WeightKindInit {
  std::string Config::*init_key;
  bool biased;
};
constexpr WeightKindInit kWeightKindInit[] = {
#define NORMSIM_WEIGHT_KIND_INIT(kind, init_key, writes_stream, biased, ...) {&Config::init_key, biased},
    NORMSIM_WEIGHT_KINDS(NORMSIM_WEIGHT_KIND_INIT)
#undef NORMSIM_WEIGHT_KIND_INIT
};

const std::string& override_for(const Config& c, WeightKind w) {
  // The official gate is columns of q_proj: W_Q's init unless init_wga says.
  if (w == WeightKind::wga && c.init_wga.empty()) return c.init_wq;
  return c.*kWeightKindInit[std::size_t(w)].init_key;
}

// The rule matrix w is drawn with: its override, else the init key's.
InitRule rule_of(const Config& c, WeightKind w) {
  const std::string& over = override_for(c, w);
  if (!over.empty()) return parse_init_override(over);
  return {c.init, c.init == vocab::Init::fixed ? c.init_std : c.init_gain};
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
      std = rule.value / std::sqrt(writes_stream(w) ? fan_out : fan_in);
      break;
  }
  if (c.scaled_output && writes_stream(w)) std /= std::sqrt(double(s.depth));
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
  const bool columns = !writes_stream(w);
  return UnitNorm{columns, weight_std(s, p, k, w) * std::sqrt(double(columns ? s.fan_in(w) : s.fan_out(w)))};
}

bool has_bias(const Config& c, WeightKind w) {
  return c.bias && kWeightKindInit[std::size_t(w)].biased;
}

double bias_std(const Config& c) {
  return c.init_bias;
}

}  // namespace normsim::sim
