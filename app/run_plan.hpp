// `normsim run --dry-run`: what each configuration of a grid needs before anything runs.
#pragma once
#include <ostream>

#include "sim/backend.hpp"
#include "sim/run/config_file.hpp"

namespace normsim::app {

// --dry-run: the grid, then per configuration its units, memory per sample on the CPU backend and an
// estimated compute time (on the CPU backend's threads; none for another backend); the machine's memory;
// and what the backend would refuse. Returns the number of configurations the backend refuses.
int print_plan(std::ostream& os, const sim::Grid& grid, const sim::Backend& backend, int unit_samples);

}  // namespace normsim::app
