#include "theory/jacobian.hpp"

#include <cmath>

namespace normsim::theory {

std::vector<std::optional<double>> jacobian_sq(std::span<const double> g) {
  std::vector<std::optional<double>> out(g.size());
  if (g.empty()) return out;
  const double top = g.back();
  if (!std::isfinite(top) || top == 0.0) return out;
  for (std::size_t l = 0; l < g.size(); ++l)
    if (std::isfinite(g[l])) out[l] = g[l] / top;
  return out;
}

}  // namespace normsim::theory
