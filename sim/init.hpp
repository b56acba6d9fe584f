// Init rules: the standard deviation of every weight matrix, from the config's rule, its per-kind
// overrides, scaled init and the placement's prescription.
//   fanin:  std = gain / sqrt(fan_in)                 (He/LeCun family; gain^2 = sigma_W^2 of theory.md §0)
//   xavier: std = gain * sqrt(2 / (fan_in + fan_out)) (Glorot & Bengio 2010)
//   fixed:  std = init_std                            (GPT-2/Megatron's 0.02 style)
//   unit:   std = gain / sqrt(n), then every vector of n entries along the embedding dimension rescaled to
//           length std sqrt(n) (nGPT; sim/unit_norm.hpp says which vectors). std is the per-entry std of the
//           same second moments: for a fixed x, E[(x.w)^2] = |x|^2 length^2 / n exactly when w is uniform on
//           the sphere of that length (docs/theory_notes.md "Unit-norm weights"), so the mean field reads it.
// then x 1/sqrt(K) for w2 and wo when scaled_output (CogView/Megatron "1/sqrt(2 layers)", K = 2 layers),
// then x the placement's multiplier (DeepNorm's beta, B2T's rescaling) when placement_init. A
// parametrization (sim/parametrization.hpp) replaces all of that where a rule sets the matrix's std, and
// folds its multiplier into the std (std_eff = mult std).
#pragma once
#include <optional>
#include <string_view>

#include "sim/placement.hpp"
#include "sim/stack.hpp"
#include "sim/unit_norm.hpp"

namespace normsim::sim {

struct InitRule {
  vocab::Init rule;
  double value;  // gain (fanin, xavier) or std (fixed)
};

// Parses a per-kind override "rule:value"; throws std::invalid_argument on a malformed one.
InitRule parse_init_override(std::string_view text);

// The std matrix w of sublayer k is drawn with.
double weight_std(const StackShape& s, const Placement& p, int k, WeightKind w);

// Whether matrix w has a bias: with bias = true every matrix but a routed MLP's router (Mixtral's and OLMoE's
// router is nn.Linear(..., bias=False): transformers modeling_mixtral.py MixtralSparseMoeBlock.gate).
bool has_bias(const Config& c, WeightKind w);
// The std of every bias entry: init_bias, as given (scaled init and the placement's multiplier rescale
// weights only). 0 is nanoGPT's init (model.py GPT._init_weights: torch.nn.init.zeros_(module.bias)), HF
// GPT-2's (modeling_gpt2.py GPT2PreTrainedModel._init_weights: module.bias.data.zero_()); sigma_b > 0 is the
// bias of the signal-propagation literature (Poole et al. 2016, Schoenholz et al. 2017: q = sigma_w^2 E phi^2
// + sigma_b^2).
double bias_std(const Config& c);

// Where matrix w of sublayer k is drawn with the unit rule (and no parametrization rule sets its std): the
// vectors its draw normalizes and their length (a parametrization's multiplier included).
std::optional<UnitNorm> unit_norm(const StackShape& s, const Placement& p, int k, WeightKind w);

}  // namespace normsim::sim
