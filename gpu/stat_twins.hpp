// CPU twins of the statistics kernels (gpu/stat_kernels.hpp): same names and signatures, host pointers,
// serial loops; the specification the kernels are tested on. The stream statistics' twins are the row
// sums every device but the kernels runs (sim/stream_sums.hpp), one row or sample at a time.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include "gpu/stat_kernels.hpp"

namespace normsim::gpu::cpu {

template <class R>
void row_stats(const R* x, const R* next, int rows, int n, double* out) {
  for (int r = 0; r < rows; ++r) {
    const std::size_t o = std::size_t(r) * n;
    sim::row_sums(x + o, next ? next + o : nullptr, n, out + std::size_t(r) * kRowStats);
  }
}

template <class R>
void unit_column_square(const R* x, const double* row, int S, int T, int d, double* out) {
  for (int s = 0; s < S; ++s) {
    const std::size_t first = std::size_t(s) * T;
    sim::unit_column_squares(x + first * d, row + first * kRowStats, T, d, out + std::size_t(s) * d);
  }
}

// Each sample's sums from its rows in token order, finished field by field.
inline void stream_stats_finish(const double* row, const double* colsq, int S, int T, int d, double* out) {
  for (int s = 0; s < S; ++s) {
    const sim::StreamSums sums = sim::stream_sums_of_rows(row + std::size_t(s) * T * kRowStats,
                                                          colsq ? colsq + std::size_t(s) * d : nullptr, T, d);
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
