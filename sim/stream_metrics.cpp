#include "sim/stream_metrics.hpp"

#include <cmath>
#include <limits>

namespace normsim::sim {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// token_cos's sums: those of the unit tokens u_t = x_t / ||x_t||, none past a token of norm 0 (the cosine
// is then undefined) or with one token.
void add_unit_sums(const MatD& x, StreamSums& s) {
  const Eigen::Index T = x.rows();
  if (T < 2) return;
  MatD n = x;
  for (Eigen::Index t = 0; t < T; ++t) {
    const double r = n.row(t).norm();
    if (!(r > 0)) {
      s.zero_rows = 1;
      return;
    }
    n.row(t) /= r;
  }
  s.columns = n.colwise().sum().squaredNorm();
  s.unit_sq = n.squaredNorm();
  s.has_columns = true;
}

// The pair sums of x and y = x_{l+1}, token by token.
void add_pair_sums(StreamField f, const MatD& x, const MatD& y, StreamSums& s) {
  for (Eigen::Index t = 0; t < x.rows(); ++t) {
    const double sq = x.row(t).squaredNorm();
    if (f == f_cos_next)
      s.cos += token_cosine_term(x.row(t).dot(y.row(t)), sq, y.row(t).squaredNorm());
    else
      s.rel += relative_update_term((y.row(t) - x.row(t)).squaredNorm(), sq);
  }
}

// The sums field f needs.
StreamSums sums_for(StreamField f, const MatD& x, const MatD* next) {
  StreamSums s;
  switch (f) {
    case f_act_sq:
      s.sq = x.squaredNorm();
      break;
    case f_mean_abs:
      s.abs = x.cwiseAbs().sum();
      break;
    case f_max_abs:
      s.max_abs = x.cwiseAbs().maxCoeff();
      break;
    case f_token_cos:
      add_unit_sums(x, s);
      break;
    case f_cos_next:
    case f_rel_update:
      add_pair_sums(f, x, *next, s);
      break;
    case f_nonfinite:
      s.nonfinite = double((!x.array().isFinite()).count());
      break;
  }
  return s;
}

}  // namespace

double stream_field(StreamField f, const MatD& x, const MatD* next) {
  return finish_stream_field(f, sums_for(f, x, next), int(x.rows()), int(x.cols()));
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

double effective_rank(const MatD& x) {
  const MatD gram = x.rows() <= x.cols() ? MatD(x * x.transpose()) : MatD(x.transpose() * x);
  Eigen::SelfAdjointEigenSolver<MatD> eig(gram, Eigen::EigenvaluesOnly);
  const Eigen::VectorXd s = eig.eigenvalues().cwiseMax(0.0).cwiseSqrt();
  const double total = s.sum();
  if (!(total > 0)) return kNaN;
  double entropy = 0;
  for (Eigen::Index i = 0; i < s.size(); ++i) {
    const double p = s[i] / total;
    if (p > 0) entropy -= p * std::log(p);
  }
  return std::exp(entropy);
}

double lane_cosine(const std::vector<const MatD*>& lanes) {
  double sum = 0;
  int pairs = 0;
  for (std::size_t i = 0; i < lanes.size(); ++i)
    for (std::size_t j = i + 1; j < lanes.size(); ++j, ++pairs)
      sum += mean_token_cosine(*lanes[i], *lanes[j]);
  return sum / double(pairs);
}

}  // namespace normsim::sim
