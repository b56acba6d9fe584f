// Every placement's accessor; registry.cpp is the one list of them. Adding a placement: one file here and
// one line in that list.
#pragma once
#include "sim/placement.hpp"

namespace normsim::sim {
const Placement& post_placement();
const Placement& pre_placement();
const Placement& peri_placement();
const Placement& mix_placement();
const Placement& b2t_placement();
const Placement& deepnorm_placement();
const Placement& lnscale_placement();
const Placement& admin_placement();
const Placement& rezero_placement();
const Placement& spannorm_placement();
const Placement& hybridnorm_placement();
const Placement& none_placement();

double deepnorm_alpha(const StackShape& s);
double deepnorm_beta(const StackShape& s);
}  // namespace normsim::sim
