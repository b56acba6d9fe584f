#include "sim/stream_metrics.hpp"

#include "sim/statistic_finish.hpp"

namespace normsim::sim {

StreamSums stream_sums(const double* x, const double* next, int T, int d, bool columns) {
  std::vector<double> rows(std::size_t(T) * kRowStats), colsq(columns ? std::size_t(d) : 0);
  for (int t = 0; t < T; ++t) {
    const std::size_t o = std::size_t(t) * d;
    row_sums(x + o, next ? next + o : nullptr, d, &rows[std::size_t(t) * kRowStats]);
  }
  if (columns) unit_column_squares(x, rows.data(), T, d, colsq.data());
  return stream_sums_of_rows(rows.data(), columns ? colsq.data() : nullptr, T, d);
}

StreamSums stream_sums(const MatD& x, const MatD* next, bool columns) {
  return stream_sums(x.data(), next ? next->data() : nullptr, int(x.rows()), int(x.cols()), columns);
}

double stream_field(StreamField f, const MatD& x, const MatD* next) {
  return finish_stream_field(f, stream_sums(x, next, kFieldNeedsColumns[f]), int(x.rows()), int(x.cols()));
}

double mean_square(const MatD& x) {
  return stream_field(f_act_sq, x);
}
double mean_abs(const MatD& x) {
  return stream_field(f_mean_abs, x);
}
double max_abs(const MatD& x) {
  return stream_field(f_max_abs, x);
}
double token_cosine(const MatD& x) {
  return stream_field(f_token_cos, x);
}
double mean_token_cosine(const MatD& a, const MatD& b) {
  return stream_field(f_cos_next, a, &b);
}
double mean_relative_update(const MatD& before, const MatD& after) {
  return stream_field(f_rel_update, before, &after);
}

GramSpectrum gram_spectrum(const MatD& x) {
  const MatD gram = x.rows() <= x.cols() ? MatD(x * x.transpose()) : MatD(x.transpose() * x);
  Eigen::SelfAdjointEigenSolver<MatD> eig(gram, Eigen::EigenvaluesOnly);
  return {eig.eigenvalues(), eig.info() == Eigen::Success};
}

double effective_rank(const MatD& x) {
  const GramSpectrum g = gram_spectrum(x);
  return effective_rank_of_eigenvalues(g.eigenvalues.data(), int(g.eigenvalues.size()), g.solved);
}

double lane_cosine(const std::vector<const MatD*>& lanes) {
  return lane_cosine_of_pairs(int(lanes.size()),
                              [&](int i, int j, int) { return mean_token_cosine(*lanes[i], *lanes[j]); });
}

}  // namespace normsim::sim
