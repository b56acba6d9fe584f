// Dense matrices of the CPU backend: row-major so a token is a contiguous row (as in llm.c's (T, C)).
#pragma once
#include <Eigen/Dense>
#include <cmath>

namespace normsim::sim {

template <class R>
using Mat = Eigen::Matrix<R, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// ||A^T B||_F for A (T x n), B (T x m) without forming the n x m product when T is small:
// ||A^T B||_F^2 = <A A^T, B B^T>_F, which costs T^2 (n + m) instead of T n m. This is why the CPU
// backend gets weight-gradient norms at a fraction of the cost of the weight gradients themselves.
template <class R, class DA, class DB>
double frobenius_of_AtB(const Eigen::MatrixBase<DA>& A, const Eigen::MatrixBase<DB>& B) {
  const double T = double(A.rows()), n = double(A.cols()), m = double(B.cols());
  if (T * T * (n + m) < T * n * m) {
    const Mat<R> ga = A * A.transpose();
    const Mat<R> gb = B * B.transpose();
    const double s = (ga.template cast<double>().cwiseProduct(gb.template cast<double>())).sum();
    return std::sqrt(std::max(0.0, s));
  }
  const Mat<R> g = A.transpose() * B;
  return std::sqrt(g.template cast<double>().squaredNorm());
}

}  // namespace normsim::sim
