// A fixed-rule Gaussian expectation for integrands that turn over on a known scale: the inner integral of
// two-token expectations (theory/pointwise_norm.cpp, theory/attention_gate.cpp), where an adaptive rule
// inside an adaptive rule costs seconds.
#pragma once
#include <algorithm>
#include <boost/math/quadrature/gauss.hpp>
#include <cmath>

namespace normsim::theory {

// E F(z), z ~ N(0, 1), by a fixed composite 10-point Gauss-Legendre rule on |z| <= 9 (the tail weighs <
// 1e-18) with panels of width min(1, 1 / scale): F(z) = f(m + scale z) turns over on a width ~1 / scale. The
// inner integral of the two-token expectations: an adaptive rule there costs seconds per norm.
template <class F>
double panel_expectation(F f, double scale) {
  using Rule = boost::math::quadrature::gauss<double, 10>;
  const auto& nodes = Rule::abscissa();
  const auto& weights = Rule::weights();
  const double width = std::min(1.0, 1.0 / std::max(scale, 1e-300)), lo = -9.0;
  const int panels = static_cast<int>(std::ceil(18.0 / width));
  const double h = 18.0 / panels, half = 0.5 * h;
  double sum = 0.0;
  const auto at = [&](double z, double w) { sum += w * f(z) * std::exp(-0.5 * z * z); };
  for (int p = 0; p < panels; ++p) {
    const double mid = lo + (p + 0.5) * h;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i] == 0.0) {
        at(mid, half * weights[i]);
      } else {
        at(mid - half * nodes[i], half * weights[i]);
        at(mid + half * nodes[i], half * weights[i]);
      }
    }
  }
  return sum * 0.39894228040143267794;  // 1 / sqrt(2 pi)
}

}  // namespace normsim::theory
