// LayerNorm and RMSNorm of one row, forward and backward, written once for CPU loops and CUDA kernels.
//   LN(x)  = gain * (x - mean(x)) / sqrt(var(x) + eps)      RMS(x) = gain * x / sqrt(mean(x^2) + eps)
// Backward (exact with eps; xhat the normalized row, rstd = 1/sqrt(var+eps) or 1/sqrt(ms+eps)):
//   LN:  dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),   dxhat = gain * dy
//   RMS: dx = rstd * (dxhat - xhat * mean(dxhat * xhat))
// Sums run in double: a row of width 16384 in float would otherwise lose digits the tests can see.
#pragma once
#include <cmath>

#include "sim/hd.hpp"
#include "vocab/enums.hpp"

namespace normsim::sim {

using NormKind = vocab::Norm;

// Writes y (may alias nothing) and returns rstd; xhat is y / gain.
template <class R>
NORMSIM_HD double row_norm_forward(NormKind kind, const R* x, R* y, int n, double gain, double eps) {
  double mean = 0.0;
  if (kind == NormKind::layernorm) {
    for (int i = 0; i < n; ++i) mean += double(x[i]);
    mean /= n;
  }
  double ss = 0.0;
  for (int i = 0; i < n; ++i) {
    const double c = double(x[i]) - mean;
    ss += c * c;
  }
  const double rstd = 1.0 / std::sqrt(ss / n + eps);
  for (int i = 0; i < n; ++i) y[i] = R((double(x[i]) - mean) * rstd * gain);
  return rstd;
}

// y is the forward output, dy the incoming gradient; writes dx (+= when accumulate).
template <class R>
NORMSIM_HD void row_norm_backward(NormKind kind, const R* y, const R* dy, R* dx, int n, double gain,
                                  double rstd, bool accumulate) {
  double mean_g = 0.0, mean_gx = 0.0;
  const double inv_gain = gain != 0.0 ? 1.0 / gain : 0.0;
  for (int i = 0; i < n; ++i) {
    const double g = double(dy[i]) * gain;
    mean_g += g;
    mean_gx += g * double(y[i]) * inv_gain;
  }
  mean_g /= n;
  mean_gx /= n;
  if (kind == NormKind::rmsnorm) mean_g = 0.0;
  for (int i = 0; i < n; ++i) {
    const double xhat = double(y[i]) * inv_gain;
    const R v = R(rstd * (double(dy[i]) * gain - mean_g - xhat * mean_gx));
    dx[i] = accumulate ? dx[i] + v : v;
  }
}

}  // namespace normsim::sim
