// Which rank runs which unit: a cost estimate per unit from its config, and a deterministic greedy
// longest-processing-time (LPT) schedule over the ranks. Pure functions of the grid; no MPI here.
#pragma once
#include <span>
#include <vector>

#include "sim/config.hpp"
#include "sim/sweep.hpp"

namespace normsim::mpi {

// Relative cost of one sample of `config` (arbitrary units, about the multiply-adds of the forward pass):
// per sublayer, MLP 2 T d h (3 T d h for SwiGLU), h = round(mlp_ratio d); attention 4 T d^2 + 2 T^2 d;
// a transformer sublayer the mean of the two (they alternate); plus T^2 d per stream for eff_rank's SVD;
// times depth; float64 counts twice. The backward pass costs about twice the forward in every case, so it
// scales all configs alike and is left out.
double sample_cost(const sim::Config& config);
double unit_cost(const sim::Grid& grid, const sim::Unit& unit);

// schedule[r]: the indices into `units` that rank r runs, in the order it runs them (costliest first).
// Greedy LPT: units by decreasing cost (ties: lower index first) each go to the rank with the least
// assigned cost so far (ties: lower rank). Deterministic in (units, costs, ranks); every unit is assigned
// exactly once. Its makespan is at most 4/3 of the optimum for the estimated costs (Graham 1969).
std::vector<std::vector<int>> lpt_schedule(std::span<const double> costs, int ranks);

}  // namespace normsim::mpi
