#include "sim/stream_metrics.hpp"

#include <cmath>
#include <limits>

namespace normsim::sim {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double mean_square(const MatD& x) {
  return x.squaredNorm() / double(x.size());
}
double mean_abs(const MatD& x) {
  return x.cwiseAbs().sum() / double(x.size());
}
double max_abs(const MatD& x) {
  return x.cwiseAbs().maxCoeff();
}

double token_cosine(const MatD& x) {
  const Eigen::Index T = x.rows();
  if (T < 2) return kNaN;
  MatD n = x;
  for (Eigen::Index t = 0; t < T; ++t) {
    const double r = n.row(t).norm();
    if (!(r > 0)) return kNaN;  // a zero token has no direction: the cosine is undefined, not 0
    n.row(t) /= r;
  }
  // sum over all pairs = ||sum of unit rows||^2 - sum of squared unit norms
  const double total = n.colwise().sum().squaredNorm() - n.squaredNorm();
  return total / double(T * (T - 1));
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

double mean_token_cosine(const MatD& a, const MatD& b) {
  double sum = 0;
  for (Eigen::Index t = 0; t < a.rows(); ++t)
    sum += a.row(t).dot(b.row(t)) / (a.row(t).norm() * b.row(t).norm());
  return sum / double(a.rows());
}

double lane_cosine(const std::vector<const MatD*>& lanes) {
  double sum = 0;
  int pairs = 0;
  for (std::size_t i = 0; i < lanes.size(); ++i)
    for (std::size_t j = i + 1; j < lanes.size(); ++j, ++pairs)
      sum += mean_token_cosine(*lanes[i], *lanes[j]);
  return sum / double(pairs);
}

double mean_relative_update(const MatD& before, const MatD& after) {
  double sum = 0;
  for (Eigen::Index t = 0; t < before.rows(); ++t)
    sum += (after.row(t) - before.row(t)).norm() / before.row(t).norm();
  return sum / double(before.rows());
}

}  // namespace normsim::sim
