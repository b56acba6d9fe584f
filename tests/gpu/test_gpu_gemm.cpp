// gpu::gemm (gpu/blas.hpp) against a product in double on the host, with the inner dimension cut into slices
// and not: every transposition, padded leading dimensions, several items, beta 0 and 1. On the mock its
// cuBLAS stand-in and sum_slices' reference run; on a device, cuBLAS and the kernel.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include "gpu/blas.hpp"
#include "gpu/device_buffer.hpp"

namespace normsim::test {
namespace {

template <class R>
std::vector<R> gaussian_vector(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> z;
  std::vector<R> v(n);
  for (R& x : v) x = R(z(rng));
  return v;
}

struct Shape {
  int m, n, k;
  bool ta, tb;
};

// Each entry within Higham's bound for a sum of products rounded in R, gamma_{k+2} (sum_l |a_l b_l| +
// |beta c|), u = eps/2: it holds for any order of the additions and with fused multiply-adds, so for each
// slice's product, cuBLAS's or the mock's, and the slices' sum (in double, then one rounding to R: within the
// two extra terms of gamma).
template <class R>
void check_gemm(const Shape& s, double beta, int batch) {
  const int a_rows = s.ta ? s.k : s.m, a_cols = s.ta ? s.m : s.k;
  const int b_rows = s.tb ? s.n : s.k, b_cols = s.tb ? s.k : s.n;
  const int lda = a_cols + 3, ldb = b_cols + 2, ldc = s.n + 5;
  const long long sa = (long long)a_rows * lda + 7, sb = (long long)b_rows * ldb + 1,
                  sc = (long long)s.m * ldc;
  const auto a = gaussian_vector<R>(std::size_t(sa) * batch, 1),
             b = gaussian_vector<R>(std::size_t(sb) * batch, 2);
  const auto c0 = gaussian_vector<R>(std::size_t(sc) * batch, 3);
  auto d_a = gpu::DeviceBuffer<R>::from_host(a), d_b = gpu::DeviceBuffer<R>::from_host(b);
  auto d_c = gpu::DeviceBuffer<R>::from_host(c0);
  gpu::Blas blas;
  gpu::gemm<R>(blas.handle(), s.ta, s.tb, s.m, s.n, s.k, 1.0, d_a.get(), lda, sa, d_b.get(), ldb, sb, beta,
               d_c.get(), ldc, sc, batch);
  const std::vector<R> c = d_c.to_host();
  const double u = std::numeric_limits<R>::epsilon() / 2, gamma = (s.k + 2) * u / (1 - (s.k + 2) * u);
  std::size_t bad = 0;
  for (int i = 0; i < batch; ++i)
    for (int r = 0; r < s.m; ++r)
      for (int j = 0; j < s.n; ++j) {
        const std::size_t at = std::size_t(i * sc + (long long)r * ldc + j);
        double sum = beta * double(c0[at]), mag = std::abs(sum);
        for (int l = 0; l < s.k; ++l) {
          const double x = a[std::size_t(i * sa + (s.ta ? (long long)l * lda + r : (long long)r * lda + l))];
          const double y = b[std::size_t(i * sb + (s.tb ? (long long)j * ldb + l : (long long)l * ldb + j))];
          sum += x * y;
          mag += std::abs(x * y);
        }
        if (!(std::abs(double(c[at]) - sum) <= gamma * mag)) ++bad;
      }
  INFO("m " << s.m << " n " << s.n << " k " << s.k << " ta " << s.ta << " tb " << s.tb << " beta " << beta
            << " slices " << gpu::inner_slices(s.m, s.n, s.k));
  CHECK(bad == 0);
  // Entries outside an item's m x n block (padding and the gaps between items) are left as they were.
  std::size_t touched = 0;
  for (std::size_t at = 0; at < c.size(); ++at) {
    const long long within = (long long)at % sc;
    if (within / ldc >= s.m || within % ldc >= s.n) touched += c[at] != c0[at];
  }
  CHECK(touched == 0);
}

}  // namespace

// The slice counts of the products that motivated them (docs/gpu.md "Slices of the inner dimension"), and of
// products that keep one: W1's MLP (64 tokens, width 512, ratio 4) and its Grams, W2's, attention's scores.
TEST_CASE("inner_slices: by the item's shape alone", "[kernel][gemm]") {
  CHECK(gpu::inner_slices(64, 2048, 512) == 1);  // 128 tiles
  CHECK(gpu::inner_slices(64, 512, 2048) == 16);
  CHECK(gpu::inner_slices(64, 64, 2048) == 16);
  CHECK(gpu::inner_slices(512, 16384, 4096) == 1);
  CHECK(gpu::inner_slices(512, 4096, 16384) == 1);
  CHECK(gpu::inner_slices(64, 64, 64) == 1);
  CHECK(gpu::inner_slices(64, 64, 512) == 1);   // k < 1024
  CHECK(gpu::inner_slices(40, 96, 1040) == 8);  // 1040 = 8 x 130; 16 slices would leave 65
  CHECK(gpu::inner_slices(33, 40, 1030) == 2);  // 1030 = 2 x 515, not divisible by 4
}

TEMPLATE_TEST_CASE("gemm matches a product in double, sliced or not", "[kernel][gemm]", float, double) {
  for (const bool ta : {false, true})
    for (const bool tb : {false, true})
      for (const Shape s :
           {Shape{40, 96, 1040, ta, tb}, Shape{33, 40, 1030, ta, tb}, Shape{17, 9, 100, ta, tb}})
        for (const double beta : {0.0, 1.0}) check_gemm<TestType>(s, beta, 3);
}

}  // namespace normsim::test
