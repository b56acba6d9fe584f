// The cost model and the LPT schedule of mpi/schedule.hpp.
#include "mpi/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace normsim::mpi {

double unit_cost(const sim::Grid& grid, const sim::Unit& unit) {
  return (unit.end - unit.begin) * sample_cost(grid.configs.at(static_cast<std::size_t>(unit.config)));
}

std::vector<std::vector<int>> lpt_schedule(std::span<const double> costs, int ranks) {
  if (ranks < 1) throw std::invalid_argument("lpt_schedule: ranks must be >= 1");
  std::vector<int> order(costs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return costs[a] > costs[b]; });
  std::vector<std::vector<int>> schedule(static_cast<std::size_t>(ranks));
  std::vector<double> load(static_cast<std::size_t>(ranks), 0.0);
  for (int u : order) {
    const auto r = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    schedule[r].push_back(u);
    load[r] += costs[u];
  }
  return schedule;
}

}  // namespace normsim::mpi
