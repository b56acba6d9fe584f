// Init rules: the standard deviation of every weight matrix, from the config's rule, its per-kind
// overrides, scaled init and the placement's prescription.
//   fanin:  std = gain / sqrt(fan_in)                 (He/LeCun family; gain^2 = sigma_W^2 of theory.md §0)
//   xavier: std = gain * sqrt(2 / (fan_in + fan_out)) (Glorot & Bengio 2010)
//   fixed:  std = init_std                            (GPT-2/Megatron's 0.02 style)
// then x 1/sqrt(K) for w2 and wo when scaled_output (CogView/Megatron "1/sqrt(2 layers)", K = 2 layers),
// then x the placement's multiplier (DeepNorm's beta, B2T's rescaling) when placement_init. A
// parametrization (sim/parametrization.hpp) replaces all of that where a rule sets the matrix's std, and
// folds its multiplier into the std (std_eff = mult std).
#pragma once
#include <string_view>

#include "sim/placement.hpp"
#include "sim/stack.hpp"

namespace normsim::sim {

struct InitRule {
  vocab::Init rule;
  double value;  // gain (fanin, xavier) or std (fixed)
};

// Parses a per-kind override "rule:value"; throws std::invalid_argument on a malformed one.
InitRule parse_init_override(std::string_view text);

// The std matrix w of sublayer k is drawn with.
double weight_std(const StackShape& s, const Placement& p, int k, WeightKind w);

}  // namespace normsim::sim
