#include "gpu/stream_statistics.hpp"

#include <algorithm>
#include <type_traits>

#include "gpu/blas.hpp"
#include "gpu/stat_kernels.hpp"

namespace normsim::gpu {

template <class R>
StreamStatistics<R>::StreamStatistics(cublasHandle_t blas, int S, int T, int d, bool eff_rank)
    : blas_(blas),
      S_(S),
      T_(T),
      d_(d),
      n_(std::min(T, d)),
      eff_rank_(eff_rank),
      rows_(std::size_t(S) * T * kRowStats),
      colsq_(std::size_t(S) * d),
      wide_(std::is_same_v<R, double> || !eff_rank ? 0 : std::size_t(S) * T * d),
      gram_(eff_rank ? std::size_t(S) * n_ * n_ : 0),
      eigenvalues_(eff_rank ? std::size_t(S) * n_ : 0),
      info_(eff_rank ? std::size_t(S) : 0) {}

template <class R>
void StreamStatistics<R>::tensor(const R* d_x, double* d_fields, const R* d_next) {
  row_stats(d_x, d_next, S_ * T_, d_, rows_.get());
  stream_stats_finish(rows_.get(), nullptr, S_, T_, d_, d_fields);
}

template <class R>
void StreamStatistics<R>::stream(const R* d_x, const R* d_next, double* d_fields, double* d_eff_rank) {
  row_stats(d_x, d_next, S_ * T_, d_, rows_.get());
  unit_column_square(d_x, rows_.get(), S_, T_, d_, colsq_.get());
  stream_stats_finish(rows_.get(), colsq_.get(), S_, T_, d_, d_fields);
  if (eff_rank_) effective_rank(d_x, d_eff_rank);
}

// As sim::effective_rank: the Gram matrix of the smaller side (X X^T when T <= d, else X^T X) in double
// (a float Gram's eigenvalues carry errors of eps ||G||, which the square roots turn into errors of
// sqrt(eps) ~ 3e-4 of the largest singular value), its eigenvalues, the entropy of the singular values.
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
  if (T_ <= d_)
    gemm<double>(blas_, false, true, T_, T_, d_, 1.0, x, d_, per, x, d_, per, 0.0, gram_.get(), T_, gram, S_);
  else
    gemm<double>(blas_, true, false, d_, d_, T_, 1.0, x, d_, per, x, d_, per, 0.0, gram_.get(), d_, gram, S_);
  solver_.compute(gram_.get(), n_, S_, eigenvalues_.get(), info_.get());
  spectral_effective_rank(eigenvalues_.get(), info_.get(), n_, S_, d_out);
}

template class StreamStatistics<float>;
template class StreamStatistics<double>;

}  // namespace normsim::gpu
