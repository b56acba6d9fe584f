// The built-in placements: those defined by an expression (builtins.cpp, one table row each) and Admin
// (admin.cpp, code: its omega is measured). registry.cpp lists them all.
#pragma once
#include <span>

#include "sim/placement.hpp"

namespace normsim::sim {
std::span<const Placement* const> expression_placements();
const Placement& admin_placement();

double deepnorm_alpha(const StackShape& s);
double deepnorm_beta(const StackShape& s);
}  // namespace normsim::sim
