// thin_gram (sim/cpu/gram.hpp) against the Gram matrix in double, and frobenius_of_AtB's path through it.
// Each entry is 16 lane sums of ceil(n / 16) products, one after another, then the 16 lanes added in a
// tree of depth 4: every product meets at most ceil(n / 16) + 4 roundings, so |computed - exact| <=
// gamma_m sum_k |a_ik a_jk|, m = ceil(n / 16) + 4, gamma_m = m u / (1 - m u), u = 2^-24 (Higham, Accuracy
// and Stability of Numerical Algorithms, 2nd ed., eq. 3.5 and §4.2 for sums in any order). A guarantee,
// not a fit: any violation is a bug.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "random_matrix.hpp"
#include "sim/cpu/frobenius.hpp"
#include "sim/cpu/gram.hpp"
#include "sim/cpu_matrix.hpp"

using normsim::sim::Mat;
using normsim::test::random_matrix;

namespace {

// a a^T as frobenius_of_AtB forms it: thin_gram where it is built, Eigen's product elsewhere (where the
// thin_gram tests below return early; the compile-time test keeps thin_gram unreferenced there).
Mat<float> gram_of(const Mat<float>& a) {
  Mat<float> g(a.rows(), a.rows());
  if constexpr (normsim::sim::has_thin_gemm)
    normsim::sim::thin_gram(g.data(), a.rows(), a.data(), a.cols(), a.rows(), a.cols());
  else
    g = a * a.transpose();
  return g;
}

bool skipped() {
  if (normsim::sim::has_thin_gemm) return false;
  WARN("built without AVX-512: thin_gram is not in this build (frobenius_of_AtB uses Eigen's GEMM)");
  return true;
}

}  // namespace

TEST_CASE("thin Gram matrices are within the float32 summation bound for every tile and row remainder",
          "[gram]") {
  if (skipped()) return;
  for (const auto& [T, n] : {std::pair{64, 512}, std::pair{64, 2048}, std::pair{17, 33}, std::pair{1, 5},
                             std::pair{5, 0}, std::pair{7, 16}, std::pair{10, 15}, std::pair{3, 100}}) {
    INFO("T " << T << ", n " << n);
    const Mat<float> a = random_matrix(T, n, 11);
    const Mat<float> g = gram_of(a);
    const Mat<double> ad = a.cast<double>();
    const Mat<double> exact = ad * ad.transpose(), size = ad.cwiseAbs() * ad.cwiseAbs().transpose();
    const double mu = double((n + 15) / 16 + 4) * std::ldexp(1.0, -24), gamma = mu / (1 - mu);
    for (Eigen::Index i = 0; i < T; ++i)
      for (Eigen::Index j = 0; j < T; ++j) {
        INFO("entry " << i << ", " << j);
        REQUIRE(std::abs(double(g(i, j)) - exact(i, j)) <= gamma * size(i, j));
      }
  }
}

TEST_CASE("a thin Gram entry has the same bits wherever its two rows sit, and the matrix is symmetric",
          "[gram]") {
  if (skipped()) return;
  const Mat<float> a = random_matrix(41, 123, 12);
  const Mat<float> g = gram_of(a);
  REQUIRE(g == g.transpose());
  const Mat<float> reversed = a.colwise().reverse(), top = a.topRows(9);
  const Mat<float> gr = gram_of(reversed), gt = gram_of(top);
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.rows(); ++j) {
      INFO("entry " << i << ", " << j);
      REQUIRE(gr(a.rows() - 1 - i, a.rows() - 1 - j) == g(i, j));
      if (i < 9 && j < 9) REQUIRE(gt(i, j) == g(i, j));
    }
}

TEST_CASE("a NaN reaches exactly the thin Gram entries of its row", "[gram]") {
  if (skipped()) return;
  Mat<float> a = random_matrix(12, 37, 13);
  a(5, 36) = std::numeric_limits<float>::quiet_NaN();  // in the masked last piece
  const Mat<float> g = gram_of(a);
  for (Eigen::Index i = 0; i < g.rows(); ++i)
    for (Eigen::Index j = 0; j < g.cols(); ++j) {
      INFO("entry " << i << ", " << j);
      REQUIRE(std::isnan(g(i, j)) == (i == 5 || j == 5));
    }
}

TEST_CASE("frobenius_of_AtB through thin Grams: within its bound in range, the scaled path outside it",
          "[gram]") {
  if (skipped()) return;  // the bound below is thin_gram's
  using normsim::sim::frobenius_of_AtB;
  const Mat<float> a = random_matrix(16, 300, 14), b = random_matrix(16, 200, 15);
  const Mat<double> exact = a.cast<double>().transpose() * b.cast<double>();
  const double want = exact.norm();
  // The square is <Ga, Gb>_F from float32 Grams, each entry within g_A size_A (g_B size_B) of the exact
  // one (the bound above; size = sum_k |a_ik a_jk|); the products and their sum in double add rounding
  // far below that. So |got^2 - want^2| <= sum_ij g_A size_A |Gb| + |Ga| g_B size_B + g_A g_B size_A size_B.
  const auto gamma = [](Eigen::Index n) {
    const double mu = double((n + 15) / 16 + 4) * std::ldexp(1.0, -24);
    return mu / (1 - mu);
  };
  const Mat<double> ad = a.cast<double>(), bd = b.cast<double>();
  const Mat<double> ga = ad * ad.transpose(), gb = bd * bd.transpose();
  const Mat<double> sa = gamma(a.cols()) * (ad.cwiseAbs() * ad.cwiseAbs().transpose()),
                    sb = gamma(b.cols()) * (bd.cwiseAbs() * bd.cwiseAbs().transpose());
  const double bound =
      (sa.cwiseProduct(gb.cwiseAbs()) + ga.cwiseAbs().cwiseProduct(sb) + sa.cwiseProduct(sb)).sum();
  const double got = frobenius_of_AtB<float>(a, b);
  CHECK(std::abs(got * got - want * want) <= bound);
  // Entries near 1e19 overflow a float32 Gram (1e38 per product): the scaled path gives the same norm.
  const Mat<float> huge = a * 1e19f;
  CHECK(frobenius_of_AtB<float>(huge, b) == Approx(want * 1e19).epsilon(1e-5));
  // Entries near 1e-30: their squares (1e-60) underflow, the Grams' diagonals are 0 or subnormal, below
  // 2^-64, so the scaled path takes over too.
  const Mat<float> tiny = a * 1e-30f;
  CHECK(frobenius_of_AtB<float>(tiny, b) == Approx(want * 1e-30).epsilon(1e-5));
  Mat<float> with_nan = b;
  with_nan(15, 199) = std::numeric_limits<float>::quiet_NaN();
  CHECK(std::isnan(frobenius_of_AtB<float>(a, with_nan)));
  CHECK(frobenius_of_AtB<float>(Mat<float>::Zero(16, 300), b) == 0.0);
}

TEST_CASE("frobenius_of_AtB of collapsed tokens: the product in double where the Grams cancel", "[gram]") {
  using normsim::sim::frobenius_of_AtB;
  // Tokens nearly equal (A's rows a + 1e-3 noise) against a gradient whose rows sum to 0 (B): A^T B is the
  // noise's share alone, while A A^T and B B^T are large, so their inner product cancels to about 1e-6 of
  // sum |Ga_ij Gb_ij| and float32 Grams (rounded to about 1e-7 of it) keep no digit of it. This is the
  // weight gradient of W_Q and W_K deep in a Post-LN stack (experiments/claims/noci_*_gradient_collapse).
  const Eigen::Index T = 16, n = 128, m = 96;
  const Mat<float> base = random_matrix(1, n, 16), noise = random_matrix(T, n, 17);
  Mat<float> a(T, n);
  for (Eigen::Index t = 0; t < T; ++t) a.row(t) = base.row(0) + 1e-3f * noise.row(t);
  Mat<double> bd = random_matrix(T, m, 18).cast<double>();
  bd.rowwise() -= bd.colwise().mean();
  const Mat<float> b = bd.cast<float>();
  const double want = (a.cast<double>().transpose() * b.cast<double>()).norm();
  // The product in double of the same float32 entries: exact to double's rounding of 16-term sums.
  CHECK(frobenius_of_AtB<float>(a, b) == Approx(want).epsilon(1e-12));
  // The Grams frobenius_of_AtB forms: cancelled, and their rounding bound (a Gram entry within
  // gamma_n sum_k |a_ik a_jk| <= gamma_n sqrt(G_ii G_jj), Cauchy-Schwarz; n roundings at most, whichever
  // kernel) allows an error of more than 1e-3 of the square's true value, so they could not be trusted.
  const Mat<float> ga = gram_of(a), gb = gram_of(b);
  const normsim::sim::GramInner g = normsim::sim::gram_inner(ga, gb);
  CHECK(normsim::sim::cancelled(g));
  const auto gamma = [](Eigen::Index k) {
    return double(k) * std::ldexp(1.0, -24) / (1 - double(k) * std::ldexp(1.0, -24));
  };
  const Eigen::VectorXd ra = ga.diagonal().cast<double>().cwiseSqrt(),
                        rb = gb.diagonal().cast<double>().cwiseSqrt();
  const double bound = gamma(n) * (ra * ra.transpose()).cwiseProduct(gb.cast<double>().cwiseAbs()).sum() +
                       gamma(m) * ga.cast<double>().cwiseAbs().cwiseProduct(rb * rb.transpose()).sum();
  CHECK(bound > 1e-3 * want * want);
  // float64 inputs take the same path and agree.
  CHECK(frobenius_of_AtB<double>(a.cast<double>(), b.cast<double>()) == Approx(want).epsilon(1e-12));
}
