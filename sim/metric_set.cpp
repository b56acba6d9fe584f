#include "sim/metric_set.hpp"

#include <stdexcept>

namespace normsim::sim {

MetricSet MetricSet::defaults() {
  MetricSet s;
  for (int m = 0; m < metric::count; ++m)
    if (!metric_table()[std::size_t(m)].costly) s.insert(m);
  return s;
}

MetricSet MetricSet::of(const std::vector<std::string>& names) {
  MetricSet s;
  for (const auto& name : names) {
    const int id = metric_id(name);
    if (id < 0) throw std::invalid_argument("unknown metric '" + name + "'");
    s.insert(id);
  }
  return s;
}

bool MetricSet::any_of(MetricPass pass) const {
  for (int m = 0; m < metric::count; ++m)
    if (contains(m) && metric_table()[std::size_t(m)].pass == pass) return true;
  return false;
}

std::vector<std::string> MetricSet::names() const {
  std::vector<std::string> out;
  for (int m = 0; m < metric::count; ++m)
    if (contains(m)) out.emplace_back(metric_table()[std::size_t(m)].name);
  return out;
}

}  // namespace normsim::sim
