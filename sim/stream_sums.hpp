// The statistics of one stream x_l (T x d, one sample) written once for every device: which fields there
// are and which metric each stores (NORMSIM_STREAM_FIELDS), the sums a device supplies (StreamSums), and
// how the sums become the stored values (finish_stream_field). The CPU backend sums with Eigen
// (sim/stream_metrics.cpp), the CUDA backend per row (gpu/stat_ops.hpp, with its references).
// Compiled by nvcc too (C++17, no vocab): the field-to-metric table is expanded in sim/stream_fields.hpp.
#pragma once
#include <cmath>
#include <limits>

#include "sim/hd.hpp"

namespace normsim::sim {

// X(field, metric, pair, min_tokens): a field (its position is its offset in a device's field block), the
// metric it stores (vocab/metrics.def; `none`: not a metric), whether it needs the next stream x_{l+1}
// (stored under x_l's index k = l, for k < K), and the fewest tokens it is defined for.
#define NORMSIM_STREAM_FIELDS(X)        \
  X(f_act_sq, act_sq, false, 1)         \
  X(f_mean_abs, act_mean_abs, false, 1) \
  X(f_max_abs, act_max_abs, false, 1)   \
  X(f_token_cos, token_cos, false, 2)   \
  X(f_cos_next, cos_next, true, 1)      \
  X(f_rel_update, rel_update, true, 1)  \
  X(f_nonfinite, none, false, 1)

enum StreamField : int {
#define NORMSIM_FIELD_ENUM(field, metric, pair, min_tokens) field,
  NORMSIM_STREAM_FIELDS(NORMSIM_FIELD_ENUM)
#undef NORMSIM_FIELD_ENUM
};
#define NORMSIM_FIELD_COUNT(...) +1
inline constexpr int kStreamFields = 0 NORMSIM_STREAM_FIELDS(NORMSIM_FIELD_COUNT);
#undef NORMSIM_FIELD_COUNT

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
