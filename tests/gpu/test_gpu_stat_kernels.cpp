// Every statistics kernel of gpu/stat_kernels.hpp against its CPU twin (gpu/stat_twins.hpp) on a device,
// float and double streams, at sizes that are no multiple of any block size. All sums are in double on
// both sides and differ only in order: n terms give relative differences of a few n * 1.1e-16; the
// largest sum here has d = 1037 terms, so eps 1e-12 (tol 1e-13 where a difference of near-equal sums is
// taken, token_cos) is ~10x above what the order can do. The eigensolver goes through the backend tests.
#include <catch2/catch.hpp>
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

TEMPLATE_TEST_CASE("widen matches its twin exactly", "[kernel][stats]", float, double) {
  using R = TestType;
  const std::vector<R> x = random_stream<R>(3);
  const auto d_x = DeviceBuffer<R>::from_host(x);
  DeviceBuffer<double> d_out(x.size());
  std::vector<double> out(x.size());
  gpu::widen(d_x.get(), x.size(), d_out.get());
  gpu::cpu::widen(x.data(), x.size(), out.data());
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
