// Mean-field output change under a random parameter update (metric output_change, update = "random"): every
// weight matrix moves by a Gaussian direction of relative size s. Pure and host-only; derived in
// docs/theory_notes.md §"Output change under a random update" from Liu et al. 2020 (arXiv 2004.08249) §4's
// per-layer dependency argument (theory.md §2.9: Post-LN N q/(1+q), Pre-LN sum q/(v0 + i q)).
#pragma once
#include "theory/meanfield.hpp"

namespace normsim::theory {

// output_change[l], l = 0..K, from the profile's act_sq and branch_sq. A closed form exists for Pre-LN and
// Post-LN stacks of MLP sublayers with a homogeneous activation (ReLU, linear), where each of W1 and W2
// moves the branch by s^2 E[F^2] and the branch's input Jacobian gain equals its output share; elsewhere
// (attention, other activations, other placements, a branch scale) the series is empty: not predicted.
// Infinite width: the O(1/d) corrections of a LayerNorm (its Jacobian drops the mean and radial directions,
// 2/d of an independent perturbation, while E[1/sigma^2] exceeds 1/E[sigma^2] by 2/d) cancel to first order.
Series random_update_output_change(const StackSpec& spec, const MeanFieldProfile& profile, double scale);

}  // namespace normsim::theory
