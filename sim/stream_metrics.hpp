// The metrics of one stream matrix x_l (T x d) and of consecutive pairs, in double precision: the CPU's
// sums of the stream fields, per row as every device sums them and finished by sim::finish_stream_field
// (sim/stream_sums.hpp), and the metrics that are not fields of one stream (eff_rank, lane_cos).
// Definitions: vocab/metrics.def and docs/metrics.md.
#pragma once
#include <vector>

#include "sim/cpu_matrix.hpp"
#include "sim/stream_sums.hpp"

namespace normsim::sim {

using MatD = Mat<double>;

// Every field's sums of x (the pair fields' with next = x_{l+1}, when not null; token_cos's unit columns
// when `columns`), row by row with sim::row_sums as the CUDA ops' references sum them. The pointer form
// reads T x d row-major doubles (the PyTorch bridge's streams, python/src/fields.cpp).
StreamSums stream_sums(const double* x, const double* next, int T, int d, bool columns);
StreamSums stream_sums(const MatD& x, const MatD* next, bool columns);
// Field f of x; a pair field (sim/stream_fields.hpp) of x and next = x_{l+1}.
double stream_field(StreamField f, const MatD& x, const MatD* next = nullptr);
double mean_square(const MatD& x);
double mean_abs(const MatD& x);
double max_abs(const MatD& x);
double token_cosine(const MatD& x);    // NaN for a single token
double effective_rank(const MatD& x);  // Roy & Vetterli 2007, finished by sim/statistic_finish.hpp
// The eigenvalues of x's Gram matrix on its smaller side (x x^T when T <= d, else x^T x), and whether the
// solver converged: what effective_rank finishes.
struct GramSpectrum {
  Eigen::VectorXd eigenvalues;
  bool solved = false;
};
GramSpectrum gram_spectrum(const MatD& x);
double mean_token_cosine(const MatD& a, const MatD& b);
double mean_relative_update(const MatD& before, const MatD& after);
// lane_cos: mean_token_cosine over the pairs of distinct lanes i < j (two or more lanes of one layer).
double lane_cosine(const std::vector<const MatD*>& lanes);

// Whether every entry of x is finite. x * 0 is 0 for a finite entry and NaN for an infinity or a NaN, so
// the sum is 0 exactly when every entry is finite; Eigen vectorises the sum, where its allFinite() goes
// entry by entry (1.95 instead of 56 us for a 64 x 512 stream, checked for every stream and gradient of
// every sample; the backend's own checks of the streams took 1.6 % of W1).
template <class D>
bool all_finite(const Eigen::DenseBase<D>& x) {
  using S = typename D::Scalar;
  return (x.derived().array() * S(0)).sum() == S(0);
}

}  // namespace normsim::sim
