#include "gpu/stream_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "gpu/blas.hpp"
#include "gpu/stat_ops.hpp"
#include "sim/metrics.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

int gram_slots(int T, int d, int streams) {
  const double n = std::min(T, d), held_bytes = 4.0 * 1024 * 1024;
  return int(std::clamp(std::floor(held_bytes / (8 * n * n)), 1.0, double(std::max(streams, 1))));
}

template <class R>
StreamStatistics<R>::StreamStatistics(cublasHandle_t blas, int S, int T, int d, const sim::MetricSet& metrics,
                                      int streams)
    : blas_(blas),
      S_(S),
      T_(T),
      d_(d),
      n_(std::min(T, d)),
      eff_rank_(metrics.contains(sim::metric::eff_rank)),
      token_cos_(metrics.contains(sim::metric::token_cos)),
      slots_(gram_slots(T, d, streams)),
      rows_(std::size_t(S) * T * kRowStats),
      colsq_(token_cos_ ? std::size_t(S) * d : 0),
      wide_(std::is_same_v<R, double> || !eff_rank_ ? 0 : std::size_t(S) * T * d),
      gram_(eff_rank_ ? std::size_t(slots_) * S * n_ * n_ : 0),
      eigenvalues_(eff_rank_ ? std::size_t(slots_) * S * n_ : 0),
      info_(eff_rank_ ? std::size_t(slots_) * S : 0) {}

template <class R>
void StreamStatistics<R>::tensor(const R* d_x, double* d_fields, const R* d_next) {
  row_stats(d_x, d_next, S_ * T_, d_, rows_.get());
  stream_stats_finish(rows_.get(), nullptr, S_, T_, d_, d_fields);
}

template <class R>
void StreamStatistics<R>::stream(const R* d_x, const R* d_next, double* d_fields, double* d_eff_rank) {
  row_stats(d_x, d_next, S_ * T_, d_, rows_.get());
  if (token_cos_) unit_column_square(d_x, rows_.get(), S_, T_, d_, colsq_.get());
  stream_stats_finish(rows_.get(), token_cos_ ? colsq_.get() : nullptr, S_, T_, d_, d_fields);
  if (eff_rank_) effective_rank(d_x, d_eff_rank);
}

// As sim::effective_rank: the Gram matrix of the smaller side (X X^T when T <= d, else X^T X) in double
// (a float Gram's eigenvalues carry errors of eps ||G||, which the square roots turn into errors of
// sqrt(eps) ~ 3e-4 of the largest singular value), into the next free slot; its eigenvalues and the entropy
// of the singular values when the slots are full or at finish().
template <class R>
void StreamStatistics<R>::effective_rank(const R* d_x, double* d_out) {
  const double* x = nullptr;
  if constexpr (std::is_same_v<R, double>) {
    x = d_x;
  } else {
    widen(d_x, wide_.size(), wide_.get());
    x = wide_.get();
  }
  const long long per = (long long)T_ * d_, gram = (long long)n_ * n_;
  double* const slot = gram_.get() + pending_.size() * std::size_t(S_) * gram;
  if (T_ <= d_)
    gemm<double>(blas_, false, true, T_, T_, d_, 1.0, x, d_, per, x, d_, per, 0.0, slot, T_, gram, S_);
  else
    gemm<double>(blas_, true, false, d_, d_, T_, 1.0, x, d_, per, x, d_, per, 0.0, slot, d_, gram, S_);
  pending_.push_back(d_out);
  if (int(pending_.size()) == slots_) finish();
}

// One batched eigensolve for every Gram held, then each stream's eff_rank from its S samples' eigenvalues.
template <class R>
void StreamStatistics<R>::finish() {
  if (pending_.empty()) return;
  const int held = int(pending_.size());
  solver_.compute(gram_.get(), n_, held * S_, eigenvalues_.get(), info_.get());
  for (int i = 0; i < held; ++i)
    spectral_effective_rank(eigenvalues_.get() + std::size_t(i) * S_ * n_, info_.get() + std::size_t(i) * S_,
                            n_, S_, pending_[std::size_t(i)]);
  pending_.clear();
}

template class StreamStatistics<float>;
template class StreamStatistics<double>;

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
