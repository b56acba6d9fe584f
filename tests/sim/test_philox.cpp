// Philox draws: our inline Philox4x32-10 equals Random123's, bulk fills equal single draws, and the
// Gaussian has the moments it should.
#include <Random123/philox.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sim/draws.hpp"
#include "sim/gaussian.hpp"

using namespace normsim::sim;

TEST_CASE("philox4x32_10 matches Random123", "[philox]") {
  r123::Philox4x32 reference;
  for (std::uint32_t i = 0; i < 1000; ++i) {
    const r123::Philox4x32::ctr_type c = {{i * 2654435761u, i + 7, 3 * i, ~i}};
    const r123::Philox4x32::key_type k = {{0xDEADBEEFu ^ i, i * 31u}};
    const auto want = reference(c, k);
    const Philox4 got = philox4x32_10(Philox4{{c[0], c[1], c[2], c[3]}}, k[0], k[1]);
    for (int j = 0; j < 4; ++j) REQUIRE(got.v[j] == want[j]);
  }
}

// The bulk fill uses Eigen's vectorized log/sin/cos, the per-entry draw (what CUDA kernels call) the scalar
// libm ones; both are accurate to a few float ulps, so they agree to 2e-6 relative (|z| <= 5.8).
TEST_CASE("bulk Gaussian fill equals the pure per-entry draw to float rounding", "[philox]") {
  const DrawKey key{0x123456789ABCDEFull, 5, 17, Stream::w2};
  std::vector<float> f(1031);  // not a multiple of the chunk or of 4
  std::vector<double> d(1031);
  fill_gaussian(f.data(), f.size(), key, 0.5);
  fill_gaussian(d.data(), d.size(), key, 0.5);
  for (std::size_t i = 0; i < f.size(); ++i) {
    REQUIRE(f[i] == Approx(gaussian_at(key, i) * 0.5f).epsilon(2e-6).margin(2e-6));
    REQUIRE(d[i] == double(f[i]));  // float64 runs use exactly the float32 weights
  }
}

TEST_CASE("Gaussian draws have mean 0, variance 1 and kurtosis 3", "[philox]") {
  // n = 2^20 draws: the standard error of the mean is 1/sqrt(n) ~ 0.001, of the variance sqrt(2/n) ~ 0.0014,
  // of the fourth moment sqrt(96/n) ~ 0.0096. We allow 5 standard errors.
  const std::size_t n = 1 << 20;
  std::vector<double> z(n);
  fill_gaussian(z.data(), n, DrawKey{42, 0, 0, Stream::w1}, 1.0);
  double m1 = 0, m2 = 0, m4 = 0;
  for (double v : z) {
    m1 += v;
    m2 += v * v;
    m4 += v * v * v * v;
  }
  m1 /= n;
  m2 /= n;
  m4 /= n;
  CHECK(std::abs(m1) < 5 / std::sqrt(double(n)));
  CHECK(std::abs(m2 - 1) < 5 * std::sqrt(2.0 / n));
  CHECK(std::abs(m4 - 3) < 5 * std::sqrt(96.0 / n));
}

TEST_CASE("different streams, layers and samples give different numbers", "[philox]") {
  const float a = gaussian_at(DrawKey{1, 0, 0, Stream::w1}, 0);
  CHECK(a != gaussian_at(DrawKey{1, 0, 0, Stream::w2}, 0));
  CHECK(a != gaussian_at(DrawKey{1, 0, 1, Stream::w1}, 0));
  CHECK(a != gaussian_at(DrawKey{1, 1, 0, Stream::w1}, 0));
  CHECK(a != gaussian_at(DrawKey{2, 0, 0, Stream::w1}, 0));
}
