// The one bridge from the simulator's Config to the theory's StackSpec. Every claim evaluates the mean field
// through this function, so the theory always sees the stack the simulator actually ran.
#pragma once
#include "sim/config.hpp"
#include "theory/stack_spec.hpp"

namespace normsim::meanfield_of {

// Weight gains sigma^2 = fan_in * std^2 come from sim's own weight_std (init rule, per-kind overrides, scaled
// init and DeepNorm's beta included), so init rules are never re-derived here. Inputs: v0 = input_std^2,
// rho0 = input_corr, eps = norm_eps (the mean field applies it at every norm: it matters where a norm's input
// second moment is not >> eps, docs/theory_notes.md §eps). Throws std::invalid_argument for a Config the
// theory cannot describe.
theory::StackSpec to_stack_spec(const sim::Config& config);

}  // namespace normsim::meanfield_of
