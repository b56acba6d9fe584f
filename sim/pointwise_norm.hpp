// DyT and Derf, the pointwise maps that replace LayerNorm in normalization-free transformers, written once
// for CPU loops, CUDA kernels and their twins:
//   DyT (Zhu, Chen, He, LeCun, Liu, CVPR 2025; jiachenzhu/DyT dynamic_tanh.py L17-23):  y = gain tanh(alpha
//   x) Derf (Chen, Lu, Zhu, Sun, Liu 2025; zlab-princeton/Derf ViT/dynamic_erf.py L20-26): y = gain erf(alpha
//   x + s)
// with a scalar alpha and shift s per norm and the per-channel gain at its init (the bias is 0 at init in
// both codes). Entry by entry, so the backward needs the input: dx = dy gain alpha f'(alpha x + s).
#pragma once
#include <cmath>

#include "sim/hd.hpp"
#include "vocab/enums.hpp"

namespace normsim::sim {

// alpha and shift of one norm (LayerNorm and RMSNorm ignore them).
struct NormAt {
  double alpha = 0.5, shift = 0.0;
};

struct PointwiseNorm {
  vocab::Norm kind;  // dyt or derf
  double gain, alpha, shift;

  NORMSIM_HD double operator()(double x) const {
    const double u = alpha * x + shift;
    return gain * (kind == vocab::Norm::dyt ? tanh(u) : erf(u));
  }
  // dy/dx at x: gain alpha (1 - tanh^2 u), or gain alpha (2 / sqrt(pi)) exp(-u^2).
  NORMSIM_HD double slope(double x) const {
    const double u = alpha * x + shift;
    if (kind == vocab::Norm::dyt) {
      const double t = tanh(u);
      return gain * alpha * (1.0 - t * t);
    }
    return gain * alpha * 1.1283791670955126 * exp(-u * u);
  }
};

}  // namespace normsim::sim
