// gpu/tuning.hpp's kernel variants against the defaults they may replace (on a device in test_gpu; on the
// mock, where each launcher is its reference, the launchers' arguments only); the whole backend under them
// is tests/gpu/test_gpu_backend.cpp's "the tuning's variants keep its numbers".
// A variant that computes the same values in another launch shape must give the default's bits; one that
// changes an order of summation, the default's numbers within that order's rounding, argued at each case.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "gpu/blas.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/ops.hpp"
#include "gpu/tuning.hpp"
#include "test_util_gpu.hpp"

namespace gpu = normsim::gpu;
namespace sim = normsim::sim;
using gpu::DeviceBuffer;
using normsim::test::random_vector;
using normsim::test::require_close;

namespace {

// Sets the process's tuning for one scope and puts the previous one back.
struct TuningScope {
  gpu::Tuning saved = gpu::tuning();
  explicit TuningScope(const gpu::Tuning& t) { gpu::tuning() = t; }
  ~TuningScope() { gpu::tuning() = saved; }
  TuningScope(const TuningScope&) = delete;
  TuningScope& operator=(const TuningScope&) = delete;
};

const std::vector<std::uint32_t> kIds = {0, 5, 2};

// gaussian_fill's entries, or gaussian_fill_bf16's bits (Out = std::uint16_t), with vector_fill on or off.
template <class Out>
std::vector<Out> fill(std::size_t n, bool vector) {
  gpu::Tuning t;
  t.vector_fill = vector;
  const TuningScope scope(t);
  const auto d_ids = DeviceBuffer<std::uint32_t>::from_host(kIds);
  DeviceBuffer<Out> d(n * kIds.size());
  // The vector kernel needs a 16-byte aligned output: without one both sides would run the scalar kernel.
  REQUIRE(reinterpret_cast<std::uintptr_t>(d.get()) % 16 == 0);
  if constexpr (std::is_same_v<Out, std::uint16_t>)
    gpu::gaussian_fill_bf16(d.get(), n, int(kIds.size()), d_ids.get(), 42, 3, sim::Stream::w2, 0.7);
  else
    gpu::gaussian_fill(d.get(), n, int(kIds.size()), d_ids.get(), 42, 3, sim::Stream::w2, 0.7);
  return d.to_host();
}

}  // namespace

// The vector kernel computes each Philox block as the scalar one does and stores the same expressions:
// the same bits. 1236 entries a sample take it; 1237 (not whole blocks) fall back to the scalar kernel.
TEMPLATE_TEST_CASE("vector_fill: gaussian_fill's values bit for bit", "[kernel][tuning]", float, double,
                   std::uint16_t) {
  for (const std::size_t n : {std::size_t(1236), std::size_t(1237), std::size_t(1) << 18}) {
    INFO("n = " << n);
    CHECK(fill<TestType>(n, true) == fill<TestType>(n, false));
  }
}

// operand_scales is sample_max_abs twice and power_of_two_scales: maxima are exact whatever the grid, so
// the same bits, non-finite samples included. Called twice with other sizes in between: its count of
// finished blocks starts from 0 at every launch.
TEMPLATE_TEST_CASE("operand_scales: the three launches' values in one", "[kernel][tuning]", float, double) {
  using R = TestType;
  const int S = 4;
  const std::vector<std::pair<std::size_t, std::size_t>> sizes = {{200, 1}, {100003, 4097}, {4096, 1u << 20}};
  for (const auto& [n, m] : sizes) {
    auto a = random_vector<R>(n * S, 14, 1e3), b = random_vector<R>(m * S, 15, 1e-3);
    a[n + n / 2] = std::numeric_limits<R>::infinity();            // sample 1 of a: NaN
    b[2 * m + m - 1] = std::numeric_limits<R>::quiet_NaN();       // sample 2 of b: NaN
    std::fill(a.begin() + std::ptrdiff_t(3 * n), a.end(), R(0));  // sample 3 of a: 0, factor 1
    const auto d_a = DeviceBuffer<R>::from_host(a), d_b = DeviceBuffer<R>::from_host(b);
    std::vector<double> max_ab(2 * S), factor(2 * S);
    gpu::cpu::operand_scales(a.data(), n, b.data(), m, S, max_ab.data(), factor.data());
    REQUIRE(std::isnan(max_ab[1]));
    REQUIRE(std::isnan(max_ab[S + 2]));
    REQUIRE(factor[3] == 1.0);
    for (int call = 0; call < 2; ++call) {
      INFO("n = " << n << ", m = " << m << ", call " << call);
      // NaN in every output first, so that an entry left unwritten (a count that did not start from 0, and
      // no block found itself last) cannot pass as the previous call's value left in reused memory.
      const std::vector<double> unwritten(2 * S, std::numeric_limits<double>::quiet_NaN());
      auto d_max = DeviceBuffer<double>::from_host(unwritten);
      auto d_factor = DeviceBuffer<double>::from_host(unwritten);
      gpu::operand_scales(d_a.get(), n, d_b.get(), m, S, d_max.get(), d_factor.get());
      require_close(d_max.to_host(), max_ab, 0.0, 0.0);
      require_close(d_factor.to_host(), factor, 0.0, 0.0);
    }
  }
}

// spread_dot adds the same double products in another fixed order. The worst case of either order is
// n 2^-53 sum |a b| (~ n^1.5 u relative here: 1e-7 at n = 2^20), far from what independent roundings do: they
// add like a random walk, about u n ~ 1e-10 absolute at n = 2^20 against |sum| ~ sqrt(n) = 1e3, 1e-13
// relative. 1e-9 relative plus 1e-12 absolute (sample_dot's row in test_gpu_ops.cpp) is 1e4 above that, and
// a lost or doubled product (|a b| ~ 1, 1e-3 of the sum) is 1e6 above it. The order is fixed by n alone:
// two calls give the same bits. 2^20 entries take 256 blocks a sample, 5000 take 2; 20 entries, the
// one-block kernel. The outputs start as NaN, so that an unwritten one fails.
TEMPLATE_TEST_CASE("spread_dot: sample_dot within its rounding, the same bits every call", "[kernel][tuning]",
                   float, double) {
  using R = TestType;
  gpu::Tuning t;
  t.spread_dot = true;
  const TuningScope scope(t);
  const std::vector<std::pair<std::size_t, int>> sizes = {
      {1, 3}, {200, 3}, {1u << 20, 4}, {5000, 300}, {20, 70000}};
  for (const auto& [n, S] : sizes) {
    INFO("n = " << n << ", S = " << S);
    const auto a = random_vector<R>(n * S, 11), b = random_vector<R>(n * S, 12);
    std::vector<double> ref(S);
    gpu::cpu::sample_dot(a.data(), b.data(), n, S, ref.data());
    const auto d_a = DeviceBuffer<R>::from_host(a), d_b = DeviceBuffer<R>::from_host(b);
    const std::vector<double> unwritten(S, std::numeric_limits<double>::quiet_NaN());
    auto d1 = DeviceBuffer<double>::from_host(unwritten), d2 = DeviceBuffer<double>::from_host(unwritten);
    gpu::sample_dot(d_a.get(), d_b.get(), n, S, d1.get());
    gpu::sample_dot(d_a.get(), d_b.get(), n, S, d2.get());
    require_close(d1.to_host(), ref, 1e-12, 1e-9);
    CHECK(d1.to_host() == d2.to_host());
  }
}

// The slicing gate's numbers: W1's 64 x 2048 x 512 products (128 tiles) are not cut by default and are cut
// in 4 under a gate of 128 tiles and k >= 512 (1024 tiles in all).
TEST_CASE("inner_slices follows the tuning's gate", "[kernel][tuning][gemm]") {
  CHECK(gpu::inner_slices(64, 2048, 512) == 1);
  gpu::Tuning t;
  t.slice_max_tiles = 128;
  t.slice_min_k = 512;
  t.slice_target_tiles = 1024;
  const TuningScope scope(t);
  CHECK(gpu::inner_slices(64, 2048, 512) == 4);
  CHECK(gpu::inner_slices(64, 512, 2048) == 16);   // 32 tiles: 32 slices would leave 64 of k, under 128
  CHECK(gpu::inner_slices(512, 4096, 4096) == 1);  // 2048 tiles
}

#ifndef NORMSIM_CUDA_MOCK
// More samples than one launch's partials hold (8192 entries: 2 blocks a sample, 8192 samples a launch):
// the launcher cuts the batch, and every sample's sum is still its own. Small integers, so that every sum is
// exact in double in any order: the reference's bits. Device only (the mock runs the reference, and the
// 67 M entries would cost the sanitizer builds minutes).
TEST_CASE("spread_dot: a batch larger than the partials' room is cut into launches", "[kernel][tuning]") {
  gpu::Tuning t;
  t.spread_dot = true;
  const TuningScope scope(t);
  const std::size_t n = 8192;
  const int S = 8200;
  std::vector<float> a(n * S), b(n * S);
  for (std::size_t i = 0; i < a.size(); ++i) {
    a[i] = float(int(i % 7) - 3 + int(i / n % 3));  // the sample index moves each sample's sum
    b[i] = float(int(i % 5) - 2);
  }
  std::vector<double> ref(S);
  gpu::cpu::sample_dot(a.data(), b.data(), n, S, ref.data());
  const auto d_a = DeviceBuffer<float>::from_host(a), d_b = DeviceBuffer<float>::from_host(b);
  auto d = DeviceBuffer<double>::from_host(std::vector<double>(S, std::numeric_limits<double>::quiet_NaN()));
  gpu::sample_dot(d_a.get(), d_b.get(), n, S, d.get());
  CHECK(d.to_host() == ref);
}
#endif
