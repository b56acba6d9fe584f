// Which rank runs which unit: a cost estimate per unit from its config, and a deterministic greedy
// longest-processing-time (LPT) schedule over the ranks. Pure functions of the grid; no MPI here.
#pragma once
#include <span>
#include <vector>

#include "sim/config.hpp"
#include "sim/run/sweep.hpp"
#include "sim/unit_plan.hpp"

namespace normsim::mpi {

// The cost of one sample (sim/unit_plan.hpp) and of a unit (its samples).
using sim::sample_cost;
double unit_cost(const sim::Grid& grid, const sim::Unit& unit);

// schedule[r]: the indices into `units` that rank r runs, in the order it runs them (costliest first).
// Greedy LPT: units by decreasing cost (ties: lower index first) each go to the rank with the least
// assigned cost so far (ties: lower rank). Deterministic in (units, costs, ranks); every unit is assigned
// exactly once. Its makespan is at most 4/3 of the optimum for the estimated costs (Graham 1969).
std::vector<std::vector<int>> lpt_schedule(std::span<const double> costs, int ranks);

}  // namespace normsim::mpi
