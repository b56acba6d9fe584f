// A parametrization resolved for one stack (docs/design/parametrization.md 3.3, docs/parametrizations.md):
// the preset's rules and param_rules (vocab/param_rules.hpp) evaluated once per matrix (sublayer k, weight
// kind w) into numbers that the draws (sim/init.hpp's weight_std), the branch multiplier
// (sim/stack_build.cpp) and the mean field (meanfield_of/spec_from_config.cpp) read.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/stack.hpp"
#include "vocab/block_eval.hpp"
#include "vocab/param_rules.hpp"

namespace normsim::sim {

// One matrix's fields. std absent: the init keys decide (sim/init.cpp); the multiplier is folded into the
// drawn matrix (std_eff = mult std). lr_sgd, lr_adam and eps are resolved and stored for the optimizer of
// several steps (sim/training_optimizer.hpp); the one update of steps = 0 refuses a parametrization
// (parametrization_issues, sim/run/expression_checks.hpp).
struct MatrixRule {
  std::optional<double> std;
  double mult = 1.0, lr_sgd = 0.0, lr_adam = 0.0, eps = 0.0;
};

class ResolvedRules {
 public:
  // Evaluates every rule of s.cfg at every sublayer; throws std::invalid_argument when a rule's text does
  // not parse (the config's edge has refused it before).
  explicit ResolvedRules(const StackShape& s);
  const MatrixRule& at(int k, WeightKind w) const { return per_matrix_.at(std::size_t(k))[std::size_t(w)]; }
  double branch_mult(int k) const { return branch_mult_.at(std::size_t(k)); }
  // The embedding's or the readout's row (`edge` names it: sim/edges.hpp), for a matrix of those fans.
  // s: the stack these rules were resolved for.
  MatrixRule edge(const StackShape& s, std::string_view edge, double fan_in, double fan_out) const;

 private:
  std::vector<vocab::ParamAssignment> rules_;
  std::vector<std::array<MatrixRule, kWeightKinds>> per_matrix_;
  std::vector<double> branch_mult_;
  // The fields of matrix w of a sublayer (edge "") or of the edge matrix `edge`, at env.
  MatrixRule evaluate(const Config& c, const vocab::ScalarEnv& env, WeightKind w,
                      std::string_view edge) const;
};

// The matrices of sublayer k: its branch's weights, and a routed MLP's router.
std::vector<WeightKind> matrices_at(const StackShape& s, int k);
// The whole rule text of c: the preset's, then param_rules ("" for none).
std::string parametrization_text(const Config& c);

}  // namespace normsim::sim
