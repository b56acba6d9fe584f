// batched_frobenius_of_AtB (gpu/gpu_branches.cpp) against sim::frobenius_of_AtB, its specification, on two
// samples: collapsed tokens, where the float32 Grams' inner product cancels and both backends take their
// double fallback, and ordinary Gaussian operands, where both keep the float32 Gram estimate. Built into
// test_gpu_mock (the mock's reference GEMM) and test_gpu (cuBLAS on a device).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "../cpu/random_matrix.hpp"
#include "gpu/blas.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/gpu_branches.hpp"
#include "gpu/memory_plan.hpp"
#include "sim/cpu/frobenius.hpp"
#include "sim/cpu_matrix.hpp"

namespace {

using normsim::sim::Mat;
using normsim::test::random_matrix;

// The weight gradient of W_K deep in a Post-LN stack (tests/cpu/test_gram.cpp's case): A's rows nearly
// equal, B's rows summing to 0, so A^T B is the noise's share alone.
void collapsed_tokens(Eigen::Index T, Eigen::Index n, Eigen::Index m, Mat<float>& a, Mat<float>& b) {
  const Mat<float> base = random_matrix(1, n, 16), noise = random_matrix(T, n, 17);
  a.resize(T, n);
  for (Eigen::Index t = 0; t < T; ++t) a.row(t) = base.row(0) + 1e-3f * noise.row(t);
  Mat<double> bd = random_matrix(T, m, 18).cast<double>();
  bd.rowwise() -= bd.colwise().mean();
  b = bd.cast<float>();
}

// How far apart two exact-to-rounding routes to ||A^T B||_F may be, relative: each Gram entry is a sum of
// n (or m) products, rounded to u of sum |products| at most per term (gamma_k ~ k u), carried into the
// inner product at the scale of sum |Ga Gb|; the T^2-term inner product adds T^2 u of the same. Relative to
// the square s that is (n + m + T^2) u sum |Ga Gb| / s; the norm's error is half the square's.
double route_bound(const Mat<float>& a, const Mat<float>& b, double u) {
  const Mat<double> ad = a.cast<double>(), bd = b.cast<double>();
  const auto g = normsim::sim::gram_inner(Mat<double>(ad * ad.transpose()), Mat<double>(bd * bd.transpose()));
  const double T = double(a.rows()), n = double(a.cols()), m = double(b.cols());
  return (n + m + T * T) * u * g.absolute / g.value;
}

}  // namespace

TEST_CASE("batched_frobenius_of_AtB: the double fallback where the Grams cancel, as the CPU backend",
          "[twin]") {
  namespace gpu = normsim::gpu;
  namespace sim = normsim::sim;
  const Eigen::Index T = 16, n = 128, m = 96;
  REQUIRE(gpu::frobenius_by_gram(T, n, m));
  Mat<float> a0, b0;
  collapsed_tokens(T, n, m, a0, b0);
  const Mat<float> a1 = random_matrix(T, n, 21), b1 = random_matrix(T, m, 22);
  // The premise: sample 0's float32 Grams cancel past the 1 % floor, sample 1's do not.
  const auto float_grams = [](const Mat<float>& x, const Mat<float>& y) {
    return sim::gram_inner(Mat<float>(x * x.transpose()), Mat<float>(y * y.transpose()));
  };
  REQUIRE(sim::cancelled(float_grams(a0, b0)));
  REQUIRE_FALSE(sim::cancelled(float_grams(a1, b1)));

  std::vector<float> a(a0.data(), a0.data() + a0.size()), b(b0.data(), b0.data() + b0.size());
  a.insert(a.end(), a1.data(), a1.data() + a1.size());
  b.insert(b.end(), b1.data(), b1.data() + b1.size());
  const auto d_a = gpu::DeviceBuffer<float>::from_host(a), d_b = gpu::DeviceBuffer<float>::from_host(b);
  gpu::DeviceBuffer<double> d_out(2);
  const gpu::Blas blas;
  gpu::batched_frobenius_of_AtB<float>(blas.handle(), d_a.get(), d_b.get(), 2, int(T), int(n), int(m),
                                       d_out.get());
  const std::vector<double> got = d_out.to_host();

  // Sample 0: the GPU's double Grams against the CPU's product in double, both exact to double's rounding
  // (bound ~1e-8 here: sum |Ga Gb| is ~1e6 times the square). The float32 Grams' own bound is ~1e1: no digit.
  const double want0 = sim::frobenius_of_AtB<float>(a0, b0);
  const double bound0 = route_bound(a0, b0, std::ldexp(1.0, -53));
  CHECK(route_bound(a0, b0, std::ldexp(1.0, -24)) > 1e-2);
  CHECK(got[0] == Approx(want0).epsilon(bound0 / 2).margin(0));
  // Sample 1: float32 Grams on both sides, summed in different orders.
  const double want1 = sim::frobenius_of_AtB<float>(a1, b1);
  CHECK(got[1] == Approx(want1).epsilon(route_bound(a1, b1, std::ldexp(1.0, -24)) / 2).margin(0));
}
