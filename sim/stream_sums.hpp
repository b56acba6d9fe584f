// The statistics of one stream x_l (T x d, one sample) written once for every device: which fields there
// are and which metric each stores (NORMSIM_STREAM_FIELDS), the sums of each row (token) a device supplies
// (RowSums), how they add up to a sample's sums (StreamSums, add_row_stats) and how the sums become the
// stored values (finish_stream_field). The CPU backend (sim/stream_metrics.cpp) and the CUDA ops' references
// (gpu/stat_ops.hpp) sum rows with row_sums and stream_sums_of_rows; the kernels (gpu/ops/row_stats.cu,
// gpu/ops/stream_stats_finish.cu) add the same RowSums terms across a block's threads, in another order.
// Compiled by nvcc too (C++17, no vocab): the field-to-metric table is expanded in sim/stream_fields.hpp.
#pragma once
#include <cmath>
#include <cstddef>
#include <limits>

#include "sim/hd.hpp"

namespace normsim::sim {

// X(field, metric, pair, min_tokens, columns): a field (its position is its offset in a device's field
// block), the metric it stores (vocab/metrics.def; `none`: not a metric), whether it needs the next stream
// x_{l+1} (stored under x_l's index k = l, for k < K), the fewest tokens it is defined for, and whether it
// needs the unit columns (StreamSums::columns, a pass of its own over the stream, made only when needed).
#define NORMSIM_STREAM_FIELDS(X)               \
  X(f_act_sq, act_sq, false, 1, false)         \
  X(f_mean_abs, act_mean_abs, false, 1, false) \
  X(f_max_abs, act_max_abs, false, 1, false)   \
  X(f_token_cos, token_cos, false, 2, true)    \
  X(f_cos_next, cos_next, true, 1, false)      \
  X(f_rel_update, rel_update, true, 1, false)  \
  X(f_nonfinite, none, false, 1, false)

enum StreamField : int {
#define NORMSIM_FIELD_ENUM(field, ...) field,
  NORMSIM_STREAM_FIELDS(NORMSIM_FIELD_ENUM)
#undef NORMSIM_FIELD_ENUM
};
#define NORMSIM_FIELD_COUNT(...) +1
inline constexpr int kStreamFields = 0 NORMSIM_STREAM_FIELDS(NORMSIM_FIELD_COUNT);
#undef NORMSIM_FIELD_COUNT
#define NORMSIM_FIELD_COLUMNS(field, metric, pair, min_tokens, columns) columns,
inline constexpr bool kFieldNeedsColumns[] = {NORMSIM_STREAM_FIELDS(NORMSIM_FIELD_COLUMNS)};
#undef NORMSIM_FIELD_COLUMNS

// One row's sums, stored as kRowStats doubles at out[r * kRowStats] (the layout a device's row buffer has).
// row_max_abs is the largest finite |x| (NaN when the row holds a NaN or Inf), row_nonfinite how many entries
// are NaN or Inf; the pair sums (of the row of the next stream) are NaN without one.
enum RowStat : int { row_sq, row_abs, row_max_abs, row_nonfinite, row_dot_next, row_next_sq, row_diff_sq };
inline constexpr int kRowStats = 7;

// A row's running sums over its entries v = x[i] (and w = next[i]), in double whatever R the stream is
// stored in. A device adds its entries in any order and combines partial sums with each_sum (and max_abs
// with a max), so a new row sum is one member here, its term in add and its slot in store.
struct RowSums {
  double sq = 0, abs = 0, max_abs = 0, nonfinite = 0, dot = 0, next_sq = 0, diff_sq = 0;

  NORMSIM_HD void add(double v) {
    const double a = std::fabs(v);
    sq += v * v;
    abs += a;
    if (std::isfinite(a))
      max_abs = std::fmax(max_abs, a);
    else
      nonfinite += 1;
  }
  NORMSIM_HD void add_pair(double v, double w) {
    dot += v * w;
    next_sq += w * w;
    diff_sq += (w - v) * (w - v);
  }
  template <class F>
  NORMSIM_HD void each_sum(F&& f) {
    double* const sums[] = {&sq, &abs, &nonfinite, &dot, &next_sq, &diff_sq};
    for (double* v : sums) *v = f(*v);
  }
  NORMSIM_HD void store(double* out, bool pair) const {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    out[row_sq] = sq, out[row_abs] = abs, out[row_max_abs] = nonfinite > 0 ? nan : max_abs;
    out[row_nonfinite] = nonfinite, out[row_dot_next] = pair ? dot : nan;
    out[row_next_sq] = pair ? next_sq : nan, out[row_diff_sq] = pair ? diff_sq : nan;
  }
};

// The row sums of x (n entries) and, with next (the row of the next stream, or null), of the pair, added
// in index order: the order every device but the CUDA kernel sums in.
template <class R>
NORMSIM_HD void row_sums(const R* x, const R* next, int n, double* out) {
  RowSums r;
  for (int i = 0; i < n; ++i) {
    r.add(double(x[i]));
    if (next) r.add_pair(double(x[i]), double(next[i]));
  }
  r.store(out, next != nullptr);
}

// token_cos's column squares of one sample (T x d, its row sums at rows): out[c] = (sum_t x[t,c] /
// ||x[t]||)^2, each column summed down the tokens in order (so the same numbers row by row as column by
// column, the CUDA kernel's way). Their sum over c is ||sum_t u_t||^2, StreamSums::columns.
template <class R>
NORMSIM_HD void unit_column_squares(const R* x, const double* rows, int T, int d, double* out) {
  for (int c = 0; c < d; ++c) out[c] = 0;
  for (int t = 0; t < T; ++t) {
    const double norm = std::sqrt(rows[std::size_t(t) * kRowStats + row_sq]);
    for (int c = 0; c < d; ++c) out[c] += double(x[std::size_t(t) * d + c]) / norm;
  }
  for (int c = 0; c < d; ++c) out[c] *= out[c];
}

// One sample's sums over the T tokens of x (and of the pair x, y = x_{l+1}). A device fills the ones the
// fields it computes need; f_nonfinite is `nonfinite` itself (how many entries are NaN or Inf).
struct StreamSums {
  double sq = 0, abs = 0;  // of x^2 and |x|
  double max_abs = 0;      // the largest finite |x|
  double nan_max = 0;      // tokens whose largest |x| is NaN (an entry is NaN or Inf): max_abs is NaN
  double nonfinite = 0;
  // token_cos from u_t = x_t / ||x_t||: sum_t ||u_t||^2, ||sum_t u_t||^2 (columns, when computed) and how
  // many tokens have norm 0 (no direction: token_cos is undefined, not 0).
  double unit_sq = 0, columns = 0, zero_rows = 0;
  bool has_columns = false;
  double cos = 0, rel = 0;  // sum_t token_cosine_term and sum_t relative_update_term of (x_t, y_t)

  // Applies f to every sum (all but max_abs): how a device that sums in parts (a CUDA block's threads)
  // combines them, without listing the sums again.
  template <class F>
  NORMSIM_HD void each_sum(F&& f) {
    double* const sums[] = {&sq, &abs, &nan_max, &nonfinite, &unit_sq, &columns, &zero_rows, &cos, &rel};
    for (double* v : sums) *v = f(*v);
  }
};

// Token t's terms of cos_next and rel_update from its sums x.y, x.x, y.y and (y - x).(y - x).
NORMSIM_HD double token_cosine_term(double dot, double sq, double next_sq) {
  return dot / (std::sqrt(sq) * std::sqrt(next_sq));
}
NORMSIM_HD double relative_update_term(double diff_sq, double sq) {
  return std::sqrt(diff_sq) / std::sqrt(sq);
}

// Row r's share of its sample's sums (every device adds the same terms; the CUDA kernel in another order).
NORMSIM_HD void add_row_stats(StreamSums& s, const double* r) {
  s.sq += r[row_sq], s.abs += r[row_abs], s.nonfinite += r[row_nonfinite], s.zero_rows += !(r[row_sq] > 0);
  if (std::isnan(r[row_max_abs]))
    s.nan_max += 1;
  else
    s.max_abs = fmax(s.max_abs, r[row_max_abs]);
  const double norm = std::sqrt(r[row_sq]);
  s.unit_sq += r[row_sq] / (norm * norm);
  s.cos += token_cosine_term(r[row_dot_next], r[row_sq], r[row_next_sq]);
  s.rel += relative_update_term(r[row_diff_sq], r[row_sq]);
}

// One sample's sums from its T rows' sums (in token order) and, when not null, token_cos's d column
// squares (in column order).
NORMSIM_HD StreamSums stream_sums_of_rows(const double* rows, const double* colsq, int T, int d) {
  StreamSums s;
  for (int t = 0; t < T; ++t) add_row_stats(s, rows + std::size_t(t) * kRowStats);
  s.has_columns = colsq != nullptr;
  for (int c = 0; colsq && c < d; ++c) s.columns += colsq[c];
  return s;
}

// Field f's value from the sums of a T x d stream (definitions: vocab/metrics.def, docs/metrics.md).
NORMSIM_HD double finish_stream_field(int f, const StreamSums& s, int T, int d) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), size = double(T) * d;
  switch (f) {
    case f_act_sq:
      return s.sq / size;
    case f_mean_abs:
      return s.abs / size;
    case f_max_abs:
      return s.nan_max > 0 ? nan : s.max_abs;
    case f_token_cos:  // sum over the pairs t != t' of u_t.u_t' = ||sum_t u_t||^2 - sum_t ||u_t||^2
      return s.has_columns && T > 1 && s.zero_rows == 0 ? (s.columns - s.unit_sq) / (double(T) * (T - 1))
                                                        : nan;
    case f_cos_next:
      return s.cos / T;
    case f_rel_update:
      return s.rel / T;
    case f_nonfinite:
      return s.nonfinite;
    default:
      return nan;
  }
}

}  // namespace normsim::sim
