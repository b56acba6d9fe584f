// Per-head pieces of the CPU attention (sim/cpu/cpu_attention_device.hpp): the norm of each head's slice of a
// T x d matrix of rows (QKV-norm, qk_norm), its backward, one head's logits, and the split of the heads
// across threads.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "sim/cpu_matrix.hpp"
#include "sim/rownorm.hpp"
#include "sim/thread_split.hpp"

namespace normsim::sim {

// The norm's kind is passed to row_norm_* as a constant in each call: inlined with a constant kind, the
// float64 RMSNorm rounds (FMA contraction) exactly as HybridNorm's RMS-only QKV-norm did when it was
// written, so the golden digests (tests/data/placements_golden_digests.csv) still hold bit for bit.

// Head h's columns h*dh .. (h+1)*dh - 1 (dh = d / heads) of y (T x d, sized by the caller): the norm `kind`
// (gain, eps) of that slice of every row of x; rstd[t * heads + h] kept for the backward.
template <class R>
void head_norm_forward(NormKind kind, const Mat<R>& x, Mat<R>& y, std::vector<double>& rstd, int heads, int h,
                       double gain, double eps) {
  const int T = int(x.rows()), d = int(x.cols()), dh = d / heads;
  for (int t = 0; t < T; ++t) {
    const std::size_t off = std::size_t(t) * d + h * dh;
    rstd[std::size_t(t) * heads + h] =
        kind == NormKind::rmsnorm
            ? row_norm_forward(NormKind::rmsnorm, x.data() + off, y.data() + off, dh, gain, eps)
            : row_norm_forward(NormKind::layernorm, x.data() + off, y.data() + off, dh, gain, eps);
  }
}

// Every head's norm: y (T x d) and rstd (T x heads) sized here.
template <class R>
void head_norm_forward(NormKind kind, const Mat<R>& x, Mat<R>& y, std::vector<double>& rstd, int heads,
                       double gain, double eps) {
  y.resize(x.rows(), x.cols());
  rstd.resize(std::size_t(x.rows()) * heads);
  for (int h = 0; h < heads; ++h) head_norm_forward(kind, x, y, rstd, heads, h, gain, eps);
}

// Head h's columns of dx = dLoss/dx, from the forward's output y and dLoss/dy (dx sized by the caller).
template <class R>
void head_norm_backward(NormKind kind, const Mat<R>& y, const Mat<R>& dy, const std::vector<double>& rstd,
                        int heads, int h, double gain, Mat<R>& dx) {
  const int T = int(y.rows()), d = int(y.cols()), dh = d / heads;
  for (int t = 0; t < T; ++t) {
    const std::size_t off = std::size_t(t) * d + h * dh;
    const double r = rstd[std::size_t(t) * heads + h];
    if (kind == NormKind::rmsnorm)
      row_norm_backward(NormKind::rmsnorm, y.data() + off, dy.data() + off, dx.data() + off, dh, gain, r,
                        false);
    else
      row_norm_backward(NormKind::layernorm, y.data() + off, dy.data() + off, dx.data() + off, dh, gain, r,
                        false);
  }
}

// Head h's logits Q_h K_h^T * scale (T x T, before the mask and the softmax; scale: logit_scale()).
template <class R>
Mat<R> head_logits(const Mat<R>& q, const Mat<R>& k, int h, int dh, double scale) {
  return (q.middleCols(h * dh, dh) * k.middleCols(h * dh, dh).transpose()) * R(scale);
}

// Scalar operations of one head's attention on T tokens of width dh: the forward's two T x T x dh
// products and its softmax (two exps per logit, about 20 operations each); the backward's four products
// and its softmax backward.
inline double head_forward_work(int T, int dh) {
  return double(T) * double(T) * (4.0 * dh + 40.0);
}
inline double head_backward_work(int T, int dh) {
  return double(T) * double(T) * (8.0 * dh + 6.0);
}

// Calls f(h) for every head, the heads split across up to `threads` threads in contiguous runs when the
// work of all of them (work_per_head each) is worth it (thread_split.hpp). f(h) reads what the heads share
// and writes only head h's columns and matrices, so each head is computed whole by one thread and the
// split changes no number.
template <class F>
void for_each_head(int heads, double work_per_head, int threads, F f) {
  for_each_run(heads, double(heads) * work_per_head, threads, [&](int first, int last) {
    for (int h = first; h < last; ++h) f(h);
  });
}

}  // namespace normsim::sim
