// Per-head pieces of the CPU attention (sim/cpu_branches.cpp): the norm of each head's slice of a T x d
// matrix of rows (QKV-norm, qk_norm), its backward, and one head's logits.
#pragma once
#include <cmath>
#include <vector>

#include "sim/cpu_matrix.hpp"
#include "sim/rownorm.hpp"

namespace normsim::sim {

// The norm's kind is passed to row_norm_* as a constant in each call: inlined with a constant kind, the
// float64 RMSNorm rounds (FMA contraction) exactly as HybridNorm's RMS-only QKV-norm did when it was
// written, so the golden digests (tests/data/placements_golden_digests.csv) still hold bit for bit.

// y = the norm `kind` (gain, eps) of every row's slice h*dh .. (h+1)*dh - 1, dh = d / heads; rstd per
// (token, head), kept for the backward.
template <class R>
void head_norm_forward(NormKind kind, const Mat<R>& x, Mat<R>& y, std::vector<double>& rstd, int heads,
                       double gain, double eps) {
  const int T = int(x.rows()), d = int(x.cols()), dh = d / heads;
  y.resize(T, d);
  rstd.resize(std::size_t(T) * heads);
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < heads; ++h) {
      const std::size_t off = std::size_t(t) * d + h * dh;
      rstd[std::size_t(t) * heads + h] =
          kind == NormKind::rmsnorm
              ? row_norm_forward(NormKind::rmsnorm, x.data() + off, y.data() + off, dh, gain, eps)
              : row_norm_forward(NormKind::layernorm, x.data() + off, y.data() + off, dh, gain, eps);
    }
}

// dLoss/dx from the forward's output y and dLoss/dy.
template <class R>
Mat<R> head_norm_backward(NormKind kind, const Mat<R>& y, const Mat<R>& dy, const std::vector<double>& rstd,
                          int heads, double gain) {
  const int T = int(y.rows()), d = int(y.cols()), dh = d / heads;
  Mat<R> dx(T, d);
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < heads; ++h) {
      const std::size_t off = std::size_t(t) * d + h * dh;
      const double r = rstd[std::size_t(t) * heads + h];
      if (kind == NormKind::rmsnorm)
        row_norm_backward(NormKind::rmsnorm, y.data() + off, dy.data() + off, dx.data() + off, dh, gain, r,
                          false);
      else
        row_norm_backward(NormKind::layernorm, y.data() + off, dy.data() + off, dx.data() + off, dh, gain, r,
                          false);
    }
  return dx;
}

// Head h's logits Q_h K_h^T / sqrt(d_h) (T x T, before the mask and the softmax).
template <class R>
Mat<R> head_logits(const Mat<R>& q, const Mat<R>& k, int h, int dh) {
  const R inv_sqrt = R(1.0 / std::sqrt(double(dh)));
  return (q.middleCols(h * dh, dh) * k.middleCols(h * dh, dh).transpose()) * inv_sqrt;
}

}  // namespace normsim::sim
