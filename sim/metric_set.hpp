// Which metrics a configuration computes and writes: the `metrics` config key, parsed from names into metric
// ids (sim/metrics.hpp) at the config's edge. Metrics left out are not computed (a run asking for no backward
// metric skips the backward pass on the CPU backend) and have no row in any result file.
#pragma once
#include <bitset>
#include <string>
#include <vector>

#include "sim/metrics.hpp"

namespace normsim::sim {

class MetricSet {
 public:
  // Every metric that is not costly (MetricInfo::costly): the key's default.
  static MetricSet defaults();
  // The set named by `names`; throws std::invalid_argument for a name that is no metric (the config's edge
  // checks names first, sim/run/config_schema.cpp).
  static MetricSet of(const std::vector<std::string>& names);

  bool contains(int metric) const { return bits_.test(std::size_t(metric)); }
  void insert(int metric) { bits_.set(std::size_t(metric)); }
  // Whether a metric of `pass` is in the set (no backward metric: no backward pass is needed).
  bool any_of(MetricPass pass) const;
  bool empty() const { return bits_.none(); }
  // The names, in table order.
  std::vector<std::string> names() const;

  friend bool operator==(const MetricSet&, const MetricSet&) = default;

 private:
  std::bitset<metric::count> bits_;
};

}  // namespace normsim::sim
