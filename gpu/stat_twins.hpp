// CPU twins of the statistics kernels (gpu/stat_kernels.hpp): same names and signatures, host pointers,
// serial loops; the specification the kernels are tested on, itself tested against sim/stream_metrics.cpp.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "gpu/stat_kernels.hpp"

namespace normsim::gpu::cpu {

template <class R>
void row_stats(const R* x, const R* next, int rows, int n, double* out) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int r = 0; r < rows; ++r) {
    const std::size_t o = std::size_t(r) * n;
    double sq = 0, ab = 0, mx = 0, bad = 0, dot = 0, nsq = 0, dsq = 0;
    for (int i = 0; i < n; ++i) {
      const double v = double(x[o + i]), a = std::abs(v);
      sq += v * v;
      ab += a;
      if (std::isfinite(a))
        mx = std::max(mx, a);
      else
        bad += 1;
      if (next) {
        const double w = double(next[o + i]);
        dot += v * w;
        nsq += w * w;
        dsq += (w - v) * (w - v);
      }
    }
    double* s = out + std::size_t(r) * kRowStats;
    s[row_sq] = sq, s[row_abs] = ab, s[row_max_abs] = bad > 0 ? nan : mx, s[row_nonfinite] = bad;
    s[row_dot_next] = next ? dot : nan, s[row_next_sq] = next ? nsq : nan, s[row_diff_sq] = next ? dsq : nan;
  }
}

template <class R>
void unit_column_square(const R* x, const double* row, int S, int T, int d, double* out) {
  for (int s = 0; s < S; ++s)
    for (int c = 0; c < d; ++c) {
      double col = 0;
      for (int t = 0; t < T; ++t) {
        const std::size_t r = std::size_t(s) * T + t;
        col += double(x[r * d + c]) / std::sqrt(row[r * kRowStats + row_sq]);
      }
      out[std::size_t(s) * d + c] = col * col;
    }
}

// Each sample's sums from its rows in token order, finished field by field.
inline void stream_stats_finish(const double* row, const double* colsq, int S, int T, int d, double* out) {
  for (int s = 0; s < S; ++s) {
    sim::StreamSums sums;
    for (int t = 0; t < T; ++t) add_row_stats(sums, row + (std::size_t(s) * T + t) * kRowStats);
    sums.has_columns = colsq != nullptr;
    for (int c = 0; colsq && c < d; ++c) sums.columns += colsq[std::size_t(s) * d + c];
    for (int f = 0; f < kStreamFields; ++f) out[f * S + s] = sim::finish_stream_field(f, sums, T, d);
  }
}

template <class R>
void widen(const R* x, std::size_t n, double* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = double(x[i]);
}

template <class R>
void scaled_widen(const R* x, const double* factor, std::size_t n, int S, double* out) {
  for (std::size_t i = 0; i < n * std::size_t(S); ++i) out[i] = double(R(x[i] * R(factor[i / n])));
}

inline void spectral_effective_rank(const double* w, const int* info, int n, int S, double* out) {
  for (int s = 0; s < S; ++s) {
    const double* e = w + std::size_t(s) * n;
    double total = 0;
    for (int i = 0; i < n; ++i) total += std::sqrt(std::max(e[i], 0.0));
    double entropy = 0;
    for (int i = 0; i < n; ++i) {
      const double p = std::sqrt(std::max(e[i], 0.0)) / total;
      if (p > 0) entropy -= p * std::log(p);
    }
    out[s] = info[s] != 0 || !(total > 0) ? std::numeric_limits<double>::quiet_NaN() : std::exp(entropy);
  }
}

inline void frobenius_finish(const double* max_a, const double* max_b, const double* sum, int S,
                             double* out) {
  for (int s = 0; s < S; ++s) {
    const double ma = max_a[s], mb = max_b[s];
    int ea = 0, eb = 0;
    if (!std::isfinite(ma) || !std::isfinite(mb)) {
      out[s] = std::numeric_limits<double>::quiet_NaN();
    } else if (ma == 0 || mb == 0) {
      out[s] = 0;
    } else {  // rounding can make a near-zero Gram product slightly negative; NaN stays NaN
      std::frexp(ma, &ea), std::frexp(mb, &eb);
      out[s] = std::ldexp(std::sqrt(sum[s] < 0 ? 0.0 : sum[s]), ea + eb);
    }
  }
}

}  // namespace normsim::gpu::cpu
