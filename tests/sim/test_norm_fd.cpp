// LayerNorm and RMSNorm rows: forward against the definition, backward against central finite differences
// in float64. Step h = 1e-6 gives truncation error O(h^2) ~ 1e-12 and rounding error O(eps/h) ~ 1e-10,
// so 1e-7 absolute on O(1) gradients is a safe bound that still catches any wrong term.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sim/gaussian.hpp"
#include "sim/pointwise_norm.hpp"
#include "sim/rownorm.hpp"

using namespace normsim::sim;

namespace {
std::vector<double> draw(int n, std::uint32_t layer, double scale, double shift) {
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = shift + scale * gaussian_at(DrawKey{9, 0, layer, Stream::w1}, i);
  return v;
}
double loss(NormKind kind, const std::vector<double>& x, const std::vector<double>& g, double gain,
            double eps) {
  std::vector<double> y(x.size());
  row_norm_forward(kind, x.data(), y.data(), int(x.size()), gain, eps);
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += g[i] * y[i];
  return s;
}
}  // namespace

TEST_CASE("norm forward follows its definition", "[norm]") {
  const int n = 13;
  const auto x = draw(n, 1, 2.0, 0.7);
  std::vector<double> y(n);
  const double eps = 1e-3, gain = 1.7;
  row_norm_forward(NormKind::layernorm, x.data(), y.data(), n, gain, eps);
  double mean = 0, var = 0;
  for (double v : x) mean += v / n;
  for (double v : x) var += (v - mean) * (v - mean) / n;
  for (int i = 0; i < n; ++i)
    CHECK(y[i] == Approx(gain * (x[i] - mean) / std::sqrt(var + eps)).epsilon(1e-12));
  row_norm_forward(NormKind::rmsnorm, x.data(), y.data(), n, gain, eps);
  double ms = 0;
  for (double v : x) ms += v * v / n;
  for (int i = 0; i < n; ++i) CHECK(y[i] == Approx(gain * x[i] / std::sqrt(ms + eps)).epsilon(1e-12));
}

TEST_CASE("norm backward matches finite differences", "[norm]") {
  for (NormKind kind : {NormKind::layernorm, NormKind::rmsnorm})
    for (double eps : {0.0, 1e-2})
      for (double gain : {1.0, 0.6}) {
        const int n = 11;
        const auto x = draw(n, 2, 1.3, 0.4), g = draw(n, 3, 1.0, 0.0);
        std::vector<double> y(n), dx(n);
        const double rstd = row_norm_forward(kind, x.data(), y.data(), n, gain, eps);
        row_norm_backward(kind, y.data(), g.data(), dx.data(), n, gain, rstd, false);
        for (int i = 0; i < n; ++i) {
          auto xp = x, xm = x;
          const double h = 1e-6;
          xp[i] += h;
          xm[i] -= h;
          const double fd = (loss(kind, xp, g, gain, eps) - loss(kind, xm, g, gain, eps)) / (2 * h);
          INFO("kind " << int(kind) << " eps " << eps << " gain " << gain << " i " << i);
          CHECK(dx[i] == Approx(fd).margin(1e-7));
        }
      }
}

// DyT and Derf (sim/pointwise_norm.hpp), entry by entry, against the sources' formulas and against central
// differences with the same step and bound as the row norms above (the slope is O(gain alpha) <= 1.5 here).
TEST_CASE("DyT and Derf follow their definitions and their slopes match finite differences", "[norm]") {
  const auto x = draw(17, 4, 2.5, 0.3);
  for (const auto kind : {NormKind::dyt, NormKind::derf})
    for (const double alpha : {0.5, 0.2, 1.3})
      for (const double shift : {0.0, -0.4}) {
        const PointwiseNorm f{kind, 1.1, alpha, shift};
        for (const double v : x) {
          INFO(int(kind) << " alpha " << alpha << " shift " << shift << " x " << v);
          const double u = alpha * v + shift;
          CHECK(f(v) == Approx(1.1 * (kind == NormKind::dyt ? std::tanh(u) : std::erf(u))).epsilon(1e-14));
          const double h = 1e-6;
          CHECK(f.slope(v) == Approx((f(v + h) - f(v - h)) / (2 * h)).margin(1e-7));
        }
      }
}
