// ||A^T B||_F without forming A^T B where that is cheaper (the Grams of A and B): the norms of the weight
// gradients the CPU engine's branches report (sim/cpu/weight_source.hpp, sim/cpu/cpu_moe.cpp).
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "sim/cpu/gram.hpp"
#include "sim/cpu/thin_gemm.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/statistic_finish.hpp"

namespace normsim::sim {

// <Ga, Gb>_F of two Gram matrices, and sum_ij |Ga_ij Gb_ij|, both in double.
struct GramInner {
  double value, absolute;
};
template <class MA, class MB>
GramInner gram_inner(const MA& ga, const MB& gb) {
  const auto products = ga.template cast<double>().cwiseProduct(gb.template cast<double>());
  return {products.sum(), products.cwiseAbs().sum()};
}

// Whether <Ga, Gb>_F cancelled so far that the Grams' rounding may dominate it: each Gram entry is rounded
// to about 1e-7 of sum_k |a_ik a_jk| (float32; gamma_m at worst, 8e-6 for thin_gram's rows of 2048), an
// error carried to s at the scale of sum |Ga_ij Gb_ij|. Where less than 1 % of that sum survives in s, s
// could be off by 1e-5 of itself and far more (the weight gradients of collapsed tokens, whose rows of A
// are nearly equal while B's sum to nearly 0: Post-LN's W_Q and W_K deep in the stack, where the Gram
// estimate's exponent in depth moved from -7.6 to -8.5 when only its rounding changed), so the norm is then
// taken from the product itself.
inline bool cancelled(const GramInner& g) {
  return g.value < 1e-2 * g.absolute;
}

// ||A^T B||_F^2 from A^T B formed in double: exact to double's rounding of T-term sums, whatever the
// cancellation between the Grams; in range for any finite float32 entries (float64 ones are scaled first).
template <class DA, class DB>
double squared_frobenius_by_product_in_double(const Eigen::MatrixBase<DA>& A,
                                              const Eigen::MatrixBase<DB>& B) {
  return (A.template cast<double>().transpose() * B.template cast<double>()).squaredNorm();
}

// <A A^T, B B^T>_F from unscaled float32 Grams (thin_gram); a NaN value where that is not to be trusted,
// for frobenius_of_AtB's scaled path to take over: a Gram that is not finite (an infinite or NaN entry, or
// one whose products overflowed) or with a diagonal entry (a row's squared norm) other than 0 below 2^-64,
// where products that underflow to subnormals (absolute error 2^-150 each, n 2^-150 per entry) could
// reach float32's relative resolution of that row's entries; above it they stay n 2^-86 below it. (A row
// of zeros has exact zero entries.)
inline GramInner inner_of_thin_grams(const Mat<float>& A, const Mat<float>& B) {
  const Eigen::Index T = A.rows();
  Mat<float> ga(T, T), gb(T, T);
  thin_gram(ga.data(), T, A.data(), A.cols(), T, A.cols());
  thin_gram(gb.data(), T, B.data(), B.cols(), T, B.cols());
  const auto tiny = [](const Mat<float>& g) {
    const float floor = std::ldexp(1.0f, -64);
    return ((g.diagonal().array() > 0.0f) && (g.diagonal().array() < floor)).any() ||
           g.diagonal().maxCoeff() < floor;
  };
  if (tiny(ga) || tiny(gb)) return {std::numeric_limits<double>::quiet_NaN(), 0.0};
  return gram_inner(ga, gb);
}

// ||A^T B||_F for A (T x n), B (T x m) without forming the n x m product when T is small:
// ||A^T B||_F^2 = <A A^T, B B^T>_F, which costs T^2 (n + m) instead of T n m. This is why the CPU
// backend gets weight-gradient norms at a fraction of the cost of the weight gradients themselves.
// The products run on A and B scaled by the powers of two that bring max|A| and max|B| near 1, and the
// result is scaled back in double: a float32 Gram of entries near 1e19 would overflow (issue 16) although
// the norm itself fits. Power-of-two scales are exact, so in range the result is bit for bit the unscaled
// one (sim/statistic_finish.hpp: power_of_two_scale, scaled_frobenius, which the CUDA backend's finish runs
// too). Where the Grams' inner product cancels (cancelled()), the product is formed in double instead. A
// non-finite entry gives NaN, never 0.
template <class R, class DA, class DB>
double frobenius_of_AtB(const Eigen::MatrixBase<DA>& A, const Eigen::MatrixBase<DB>& B) {
  const double T = double(A.rows()), n = double(A.cols()), m = double(B.cols());
  const bool by_grams = T * T * (n + m) < T * n * m;
  if constexpr (has_thin_gemm && std::is_same_v<DA, Mat<float>> && std::is_same_v<DB, Mat<float>>) {
    if (by_grams) {
      const GramInner g = inner_of_thin_grams(A.derived(), B.derived());
      if (std::isfinite(g.value))
        return std::sqrt(cancelled(g) ? squared_frobenius_by_product_in_double(A, B)
                                      : std::max(g.value, 0.0));
    }
  }
  // max |entry| in one pass that also finds non-finite entries: NaN propagates, an infinity is the max.
  const double ma = A.size() ? double(A.cwiseAbs().template maxCoeff<Eigen::PropagateNaN>()) : 0.0;
  const double mb = B.size() ? double(B.cwiseAbs().template maxCoeff<Eigen::PropagateNaN>()) : 0.0;
  if (frobenius_from_maxima(ma, mb)) return scaled_frobenius(ma, mb, 0.0);  // NaN, or 0: no product needed
  const Mat<R> a = A * R(power_of_two_scale(ma)), b = B * R(power_of_two_scale(mb));
  double s;
  if (by_grams) {
    const Mat<R> ga = a * a.transpose();
    const Mat<R> gb = b * b.transpose();
    const GramInner g = gram_inner(ga, gb);
    // On the scaled operands: in double, entries of a float64 stack past 1e70 would overflow the norm.
    s = cancelled(g) ? squared_frobenius_by_product_in_double(a, b) : g.value;
  } else {
    s = (a.transpose() * b).template cast<double>().squaredNorm();
  }
  return scaled_frobenius(ma, mb, s);
}

}  // namespace normsim::sim
