// Dense matrices of the CPU backend: row-major so a token is a contiguous row (as in llm.c's (T, C)).
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "sim/gram.hpp"
#include "sim/thin_gemm.hpp"

namespace normsim::sim {

template <class R>
using Mat = Eigen::Matrix<R, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// ||A^T B||_F^2 = <A A^T, B B^T>_F from unscaled float32 Grams (thin_gram), summed in double; NaN where
// that is not to be trusted, for frobenius_of_AtB's scaled path to take over: a Gram that is not finite
// (an infinite or NaN entry, or one whose products overflowed) or whose largest diagonal entry (a row's
// squared norm) is below 2^-64, where products that underflow to subnormals (absolute error 2^-150 each,
// n 2^-150 per entry) could reach float32's relative resolution; above it they stay n 2^-86 below it.
inline double frobenius_sq_by_thin_grams(const Mat<float>& A, const Mat<float>& B) {
  const Eigen::Index T = A.rows();
  Mat<float> ga(T, T), gb(T, T);
  thin_gram(ga.data(), T, A.data(), A.cols(), T, A.cols());
  thin_gram(gb.data(), T, B.data(), B.cols(), T, B.cols());
  const double floor = std::ldexp(1.0, -64);
  if (double(ga.diagonal().maxCoeff()) < floor || double(gb.diagonal().maxCoeff()) < floor)
    return std::numeric_limits<double>::quiet_NaN();
  return (ga.cast<double>().cwiseProduct(gb.cast<double>())).sum();
}

// ||A^T B||_F for A (T x n), B (T x m) without forming the n x m product when T is small:
// ||A^T B||_F^2 = <A A^T, B B^T>_F, which costs T^2 (n + m) instead of T n m. This is why the CPU
// backend gets weight-gradient norms at a fraction of the cost of the weight gradients themselves.
// The products run on A and B scaled by the powers of two that bring max|A| and max|B| near 1, and the
// result is scaled back in double: a float32 Gram of entries near 1e19 would overflow (issue 16) although
// the norm itself fits. Power-of-two scales are exact, so in range the result is bit for bit the unscaled
// one. A non-finite entry gives NaN, never 0.
template <class R, class DA, class DB>
double frobenius_of_AtB(const Eigen::MatrixBase<DA>& A, const Eigen::MatrixBase<DB>& B) {
  const double T = double(A.rows()), n = double(A.cols()), m = double(B.cols());
  if constexpr (has_thin_gemm && std::is_same_v<DA, Mat<float>> && std::is_same_v<DB, Mat<float>>) {
    if (T * T * (n + m) < T * n * m) {
      const double s = frobenius_sq_by_thin_grams(A.derived(), B.derived());
      if (std::isfinite(s)) return std::sqrt(std::max(s, 0.0));
    }
  }
  // max |entry| in one pass that also finds non-finite entries: NaN propagates, an infinity is the max.
  const double ma = A.size() ? double(A.cwiseAbs().template maxCoeff<Eigen::PropagateNaN>()) : 0.0;
  const double mb = B.size() ? double(B.cwiseAbs().template maxCoeff<Eigen::PropagateNaN>()) : 0.0;
  if (!std::isfinite(ma) || !std::isfinite(mb)) return std::numeric_limits<double>::quiet_NaN();
  if (ma == 0.0 || mb == 0.0) return 0.0;
  int ea = 0, eb = 0;
  std::frexp(ma, &ea), std::frexp(mb, &eb);
  const Mat<R> a = A * R(std::ldexp(1.0, -ea)), b = B * R(std::ldexp(1.0, -eb));
  double s;
  if (T * T * (n + m) < T * n * m) {
    const Mat<R> ga = a * a.transpose();
    const Mat<R> gb = b * b.transpose();
    s = (ga.template cast<double>().cwiseProduct(gb.template cast<double>())).sum();
  } else {
    s = (a.transpose() * b).template cast<double>().squaredNorm();
  }
  // Rounding can make a Gram inner product of a near-zero gradient slightly negative.
  return std::ldexp(std::sqrt(s < 0 ? 0.0 : s), ea + eb);
}

}  // namespace normsim::sim
