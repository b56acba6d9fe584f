// thin_gemm (sim/cpu/thin_gemm.hpp) against the same products in double, through product_by_columns as the
// CPU backend calls it. The tolerance is the textbook bound for a float32 sum of k products accumulated
// one after another (with or without fused multiply-adds): |computed - exact| <= gamma_k sum_i |a_i w_i|,
// gamma_k = k u / (1 - k u), u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
// eq. 3.5). It is a guarantee, not a fit, so any violation is a bug. Shapes cover every tile remainder:
// tokens not a multiple of 16, columns not a multiple of 6 or of the 256-column block, k = 0.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "random_matrix.hpp"
#include "sim/cpu/cpu_parallel.hpp"

using normsim::sim::Mat;
using normsim::sim::product_by_columns;
using normsim::test::random_matrix;

namespace {

// Every entry of got within gamma_k (|c0| + |a| |b|) of c0 + a b computed in double.
template <class DB>
void require_within_bound(const Mat<float>& got, const Mat<float>& c0, const Mat<float>& a, const DB& b) {
  const Mat<double> ad = a.cast<double>(), bd = b.template cast<double>();
  const Mat<double> exact = c0.cast<double>() + ad * bd;
  const Mat<double> size = c0.cast<double>().cwiseAbs() + ad.cwiseAbs() * bd.cwiseAbs();
  const double ku = double(a.cols() + 1) * std::ldexp(1.0, -24), gamma = ku / (1 - ku);
  REQUIRE(got.rows() == exact.rows());
  REQUIRE(got.cols() == exact.cols());
  for (Eigen::Index i = 0; i < got.rows(); ++i)
    for (Eigen::Index j = 0; j < got.cols(); ++j) {
      INFO("entry " << i << ", " << j << " of " << got.rows() << " x " << got.cols() << ", k " << a.cols());
      REQUIRE(std::abs(double(got(i, j)) - exact(i, j)) <= gamma * size(i, j));
    }
}

}  // namespace

TEST_CASE("thin products of A W and A W^T are within the float32 summation bound for every tile remainder",
          "[thin_gemm]") {
  for (const auto& [T, k, n] :
       {std::tuple{64, 512, 700}, std::tuple{17, 33, 13}, std::tuple{1, 5, 1}, std::tuple{80, 96, 263},
        std::tuple{3, 0, 7}, std::tuple{49, 300, 6}, std::tuple{40, 70, 296}, std::tuple{40, 50, 40}}) {
    for (const bool accumulate : {false, true}) {
      INFO("T " << T << ", k " << k << ", n " << n << (accumulate ? ", accumulated" : ""));
      const Mat<float> a = random_matrix(T, k, 1), w = random_matrix(k, n, 2), wt = random_matrix(n, k, 3);
      const Mat<float> c0 = accumulate ? random_matrix(T, n, 4) : Mat<float>::Zero(T, n);
      for (const int threads : {1, 2}) {
        Mat<float> c = c0;
        product_by_columns(c, a, w, accumulate, threads);
        require_within_bound(c, c0, a, w);
        Mat<float> ct = c0;
        product_by_columns(ct, a, wt.transpose(), accumulate, threads);
        require_within_bound(ct, c0, a, wt.transpose());
      }
    }
  }
}

TEST_CASE("thin products give every entry the same bits whatever its tile, block and thread", "[thin_gemm]") {
  // Column j of A W computed inside a 700-column product equals the same column computed alone: the sum
  // order depends on the entry alone (thin_gemm.hpp). Eigen's GEMM, which builds without AVX-512 use
  // (NORMSIM_NATIVE off, or a machine without it), blocks the sums by the product's shape, so there it
  // does not hold.
  if (!normsim::sim::has_thin_gemm) {
    WARN("built without AVX-512: thin_gemm is not in this build, nothing to compare");
    return;
  }
  const Mat<float> a = random_matrix(37, 129, 5), w = random_matrix(129, 700, 6);
  Mat<float> whole, one;
  product_by_columns(whole, a, w, false, 2);
  for (const Eigen::Index j : {0, 5, 6, 255, 256, 511, 699}) {
    INFO("column " << j);
    const Mat<float> column = w.col(j);
    product_by_columns(one, a, column, false, 1);
    REQUIRE(one.col(0) == whole.col(j));
  }
  // The same for A W^T, whose tiles run along tokens: token t computed alone equals token t of all 37.
  const Mat<float> wt = random_matrix(700, 129, 9);
  product_by_columns(whole, a, wt.transpose(), false, 2);
  for (const Eigen::Index t : {0, 15, 16, 33, 36}) {
    INFO("token " << t);
    const Mat<float> row = a.row(t);
    product_by_columns(one, row, wt.transpose(), false, 1);
    REQUIRE(one.row(0) == whole.row(t));
  }
}

TEST_CASE("thin products propagate NaN and infinity to exactly the entries they reach", "[thin_gemm]") {
  Mat<float> a = random_matrix(20, 40, 7), w = random_matrix(40, 30, 8), c;
  a(3, 11) = std::numeric_limits<float>::quiet_NaN();
  w(7, 21) = std::numeric_limits<float>::infinity();
  const Mat<float> wt = w.transpose();
  for (const bool transposed : {false, true}) {
    if (transposed)
      product_by_columns(c, a, wt.transpose(), false, 2);
    else
      product_by_columns(c, a, w, false, 2);
    for (Eigen::Index i = 0; i < c.rows(); ++i)
      for (Eigen::Index j = 0; j < c.cols(); ++j) {
        INFO("entry " << i << ", " << j << (transposed ? " of A W^T" : " of A W"));
        REQUIRE(std::isnan(c(i, j)) == (i == 3));  // a(i, 7) is never 0, so inf * a(i, 7) is an infinity
        if (i != 3) REQUIRE(std::isinf(c(i, j)) == (j == 21));
      }
  }
}

TEST_CASE("transpose_for_awt is the transpose, whole tiles and remainders", "[thin_gemm]") {
  if (!normsim::sim::has_thin_gemm) {
    WARN("built without AVX-512: transpose_for_awt is not in this build");
    return;
  }
  for (const auto& [T, k] : {std::pair{64, 2048}, std::pair{16, 16}, std::pair{17, 33}, std::pair{5, 70},
                             std::pair{48, 7}, std::pair{1, 1}}) {
    INFO("T " << T << ", k " << k);
    const Mat<float> a = random_matrix(T, k, 10);
    Mat<float> at(k, T);
    if constexpr (normsim::sim::has_thin_gemm)  // unreferenced where it is not built
      normsim::sim::transpose_for_awt(at.data(), a.data(), k, T, k);
    REQUIRE(at == a.transpose());
  }
}
