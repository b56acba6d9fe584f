// Philox draws: our inline Philox4x32-10 equals Random123's, bulk fills equal single draws, and the
// Gaussian has the moments it should.
#include <Random123/philox.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sim/draws.hpp"
#include "sim/gaussian.hpp"
#include "sim/philox_lanes.hpp"
#include "sim/stack.hpp"

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

// The bulk draws' Philox (16 blocks per AVX-512 vector where the build has it, the scalar code for the rest)
// gives philox4x32_10's bits for every block: runs of 0..40 blocks (whole vectors and a tail), keys with
// both halves set, counters that wrap around 2^32.
TEST_CASE("philox_lanes equals philox4x32_10 block by block", "[philox]") {
  for (const std::uint32_t b0 : {0u, 77u, 0xFFFFFFF0u})
    for (std::size_t nb = 0; nb <= 40; ++nb) {
      const DrawKey key{0xF00DCAFE12345678ull + nb, 9, 31, Stream::wk};
      std::vector<std::uint32_t> w[4];
      for (auto& v : w) v.assign(nb, 0);
      std::uint32_t* const lanes[4] = {w[0].data(), w[1].data(), w[2].data(), w[3].data()};
      philox_lanes(key, b0, nb, lanes);
      for (std::size_t j = 0; j < nb; ++j) {
        const Philox4 want =
            philox4x32_10(philox_counter(b0 + std::uint32_t(j), key.stream, key.layer, key.sample),
                          std::uint32_t(key.seed), std::uint32_t(key.seed >> 32));
        for (int k = 0; k < 4; ++k) REQUIRE(w[k][j] == want.v[k]);
      }
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

// Issue 31 item 2: a weight's identity is (kind, index); index 0 must leave today's counter word as it was,
// and other indices must give other numbers, in the scalar draw and in the bulk fill (AVX-512 lanes).
TEST_CASE("a weight index enters the draw key, index 0 giving the kind alone", "[philox]") {
  for (int w = 0; w < kWeightKinds; ++w) {
    const auto kind = WeightKind(w);
    CHECK(std::uint32_t(weight_stream(WeightId{kind, 0})) == std::uint32_t(w));
    CHECK(std::uint32_t(update_stream(WeightId{kind, 0})) ==
          std::uint32_t(Stream::update_base) + std::uint32_t(w));
    CHECK(std::uint32_t(weight_stream(WeightId{kind, 3})) == (3u << 16 | std::uint32_t(w)));
  }
  const DrawKey k0{5, 1, 2, weight_stream(WeightKind::w1)},
      k1{5, 1, 2, weight_stream(WeightId{WeightKind::w1, 1})};
  CHECK(gaussian_at(k0, 0) != gaussian_at(k1, 0));
  CHECK(gaussian_at(k1, 0) != gaussian_at(DrawKey{5, 1, 2, weight_stream(WeightId{WeightKind::w1, 2})}, 0));
  std::vector<float> a(2051), b(2051);
  fill_gaussian(a.data(), a.size(), k1, 1.0);
  for (std::size_t i = 0; i < a.size(); i += 97) CHECK(a[i] == Approx(gaussian_at(k1, i)).margin(1e-5));
  fill_gaussian(b.data(), b.size(), k0, 1.0);
  CHECK(a != b);
}
