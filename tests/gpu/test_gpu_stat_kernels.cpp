// Every statistics kernel of gpu/stat_kernels.hpp against its CPU twin (gpu/stat_twins.hpp) on a device,
// float and double streams, at sizes that are no multiple of any block size. All sums are in double on
// both sides and differ only in order: n terms give relative differences of a few n * 1.1e-16; the
// largest sum here has d = 1037 terms, so eps 1e-12 (tol 1e-13 where a difference of near-equal sums is
// taken, token_cos) is ~10x above what the order can do. The eigensolver goes through the backend tests.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/stat_kernels.hpp"
#include "gpu/stat_twins.hpp"
#include "test_util_gpu.hpp"

using normsim::gpu::DeviceBuffer;
using normsim::test::require_close;
namespace gpu = normsim::gpu;

namespace {

constexpr int kS = 3, kT = 13, kD = 1037;

template <class R>
std::vector<R> random_stream(unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<R> v(std::size_t(kS) * kT * kD);
  for (auto& x : v) x = R(z(gen));
  return v;
}

}  // namespace

TEMPLATE_TEST_CASE("row_stats, unit_column_square, stream_stats_finish match their twins", "[kernel][stats]",
                   float, double) {
  using R = TestType;
  std::vector<R> x = random_stream<R>(1), next = random_stream<R>(2);
  for (int c = 0; c < kD; ++c) x[std::size_t(kT + 4) * kD + c] = 0;       // sample 1: a zero token
  x[std::size_t(2 * kT) * kD + 7] = std::numeric_limits<R>::quiet_NaN();  // sample 2: a NaN
  const auto d_x = DeviceBuffer<R>::from_host(x), d_next = DeviceBuffer<R>::from_host(next);
  const std::size_t nrows = std::size_t(kS) * kT * gpu::kRowStats;
  DeviceBuffer<double> d_rows(nrows), d_colsq(std::size_t(kS) * kD), d_out(gpu::kStreamFields * kS);
  std::vector<double> rows(nrows), colsq(std::size_t(kS) * kD), out(gpu::kStreamFields * kS);
  for (const bool pair : {true, false}) {
    gpu::row_stats(d_x.get(), pair ? d_next.get() : nullptr, kS * kT, kD, d_rows.get());
    gpu::cpu::row_stats(x.data(), pair ? next.data() : nullptr, kS * kT, kD, rows.data());
    require_close(d_rows.to_host(), rows, 0.0, 1e-12);
    gpu::unit_column_square(d_x.get(), d_rows.get(), kS, kT, kD, d_colsq.get());
    gpu::cpu::unit_column_square(x.data(), rows.data(), kS, kT, kD, colsq.data());
    require_close(d_colsq.to_host(), colsq, 0.0, 1e-12);
    gpu::stream_stats_finish(d_rows.get(), d_colsq.get(), kS, kT, kD, d_out.get());
    gpu::cpu::stream_stats_finish(rows.data(), colsq.data(), kS, kT, kD, out.data());
    require_close(d_out.to_host(), out, 1e-13, 1e-12);
  }
}

// unit_column_square sums each column down the tokens in the twin's order (the terms computed in parallel,
// by tiles of 32 tokens and 32 columns), and double division and square root are correctly rounded on both
// sides (nvcc's default -prec-div, -prec-sqrt): given the same row sums, the same bits, at sizes that leave
// partial tiles of tokens (70 = 2 x 32 + 6) and of columns (69 = 2 x 32 + 5), and a zero token (NaN terms).
TEMPLATE_TEST_CASE("unit_column_square is its twin exactly, across token and column tiles", "[kernel][stats]",
                   float, double) {
  using R = TestType;
  const int S = 3, T = 70, d = 69;
  std::mt19937 gen(11);
  std::normal_distribution<double> z(0.0, 1.0);
  std::vector<R> x(std::size_t(S) * T * d);
  for (auto& v : x) v = R(z(gen));
  for (int c = 0; c < d; ++c) x[std::size_t(T + 40) * d + c] = 0;  // sample 1, token 40: a zero row
  const auto d_x = DeviceBuffer<R>::from_host(x);
  DeviceBuffer<double> d_rows(std::size_t(S) * T * gpu::kRowStats), d_colsq(std::size_t(S) * d);
  gpu::row_stats(d_x.get(), static_cast<const R*>(nullptr), S * T, d, d_rows.get());
  const std::vector<double> rows = d_rows.to_host();
  std::vector<double> colsq(std::size_t(S) * d);
  gpu::unit_column_square(d_x.get(), d_rows.get(), S, T, d, d_colsq.get());
  gpu::cpu::unit_column_square(x.data(), rows.data(), S, T, d, colsq.data());
  const std::vector<double> got = d_colsq.to_host();
  CHECK(std::isnan(colsq[std::size_t(d)]));  // sample 1's columns: a 0 / 0 term
  require_close(got, colsq, 0.0, 0.0);
}

// One product by a power of two (or, in the last sample, by 3: a rounded product) in R and a widening,
// correctly rounded on both sides: the same bits.
TEMPLATE_TEST_CASE("widen and scaled_widen match their twins exactly", "[kernel][stats]", float, double) {
  using R = TestType;
  const std::vector<R> x = random_stream<R>(3);
  const auto d_x = DeviceBuffer<R>::from_host(x);
  DeviceBuffer<double> d_out(x.size());
  std::vector<double> out(x.size());
  gpu::widen(d_x.get(), x.size(), d_out.get());
  gpu::cpu::widen(x.data(), x.size(), out.data());
  require_close(d_out.to_host(), out, 0.0, 0.0);
  const std::vector<double> factor = {0.25, 1024.0, 3.0};
  const auto d_factor = DeviceBuffer<double>::from_host(factor);
  const std::size_t n = x.size() / kS;
  gpu::scaled_widen(d_x.get(), d_factor.get(), n, kS, d_out.get());
  gpu::cpu::scaled_widen(x.data(), factor.data(), n, kS, out.data());
  require_close(d_out.to_host(), out, 0.0, 0.0);
}

TEST_CASE("spectral_effective_rank and frobenius_finish match their twins", "[kernel][stats]") {
  constexpr int n = 301;
  std::mt19937 gen(4);
  std::exponential_distribution<double> e(1.0);
  std::vector<double> w(std::size_t(kS) * n);
  for (auto& v : w) v = e(gen) - 0.01;  // a few slightly negative eigenvalues, clamped to 0 by both
  const std::vector<int> info = {0, 1, 0};
  const auto d_w = DeviceBuffer<double>::from_host(w);
  const auto d_info = DeviceBuffer<int>::from_host(info);
  DeviceBuffer<double> d_out(kS);
  std::vector<double> out(kS);
  gpu::spectral_effective_rank(d_w.get(), d_info.get(), n, kS, d_out.get());
  gpu::cpu::spectral_effective_rank(w.data(), info.data(), n, kS, out.data());
  require_close(d_out.to_host(), out, 0.0, 1e-12);

  const std::vector<double> ma = {768, 0, std::numeric_limits<double>::quiet_NaN(), 3}, mb = {4, 2, 1, 5},
                            sum = {9, 4, 1, -1e-30};
  const auto d_ma = DeviceBuffer<double>::from_host(ma), d_mb = DeviceBuffer<double>::from_host(mb),
             d_sum = DeviceBuffer<double>::from_host(sum);
  DeviceBuffer<double> d_f(4);
  std::vector<double> f(4);
  gpu::frobenius_finish(d_ma.get(), d_mb.get(), d_sum.get(), 4, d_f.get());
  gpu::cpu::frobenius_finish(ma.data(), mb.data(), sum.data(), 4, f.data());
  require_close(d_f.to_host(), f, 0.0, 0.0);  // frexp, ldexp and sqrt are exact or correctly rounded
}
