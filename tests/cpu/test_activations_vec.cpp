// The vectorised float32 activations of the CPU backend (sim/cpu/activations_vec.hpp) against their
// definitions in double: GELU (std::erf, std::exp) at 2^21 float inputs spread over [-12, 12]; SiLU and tanh
// against activate<double> (activations.hpp) on that grid, tails out to float's largest values, zeros, +-inf
// and NaN. The error is measured in float ulps of the exact value where the float formula has no
// cancellation, and as an absolute error elsewhere (for GELU at z < -3, 1 + erf(z / sqrt 2) cancels: the
// scalar float formula loses the same digits).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "sim/cpu/activations_vec.hpp"
#include "sim/cpu/cpu_backend.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/sample_metrics.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;

namespace {

double gelu_exact(double z) {
  return 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0)));
}
double gelu_derivative_exact(double z) {
  return 0.5 * (1.0 + std::erf(z / std::sqrt(2.0))) + z * std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
}

struct Errors {
  double ulps = 0, absolute = 0;
  double ulps_at = 0;  // the input of the largest error in ulps
};

// Largest error of got against exact: in ulps of float at exact where relative(z, exact) and exact is a
// normal float, absolute elsewhere.
template <class Exact, class Relative>
Errors errors(const Mat<float>& z, const Mat<float>& got, Exact exact, Relative relative) {
  Errors e;
  for (Eigen::Index i = 0; i < z.size(); ++i) {
    const double x = z.data()[i], want = exact(x), err = std::abs(double(got.data()[i]) - want);
    if (std::abs(want) >= std::numeric_limits<float>::min() && relative(x, want)) {
      int exponent = 0;
      std::frexp(want, &exponent);
      if (err / std::ldexp(1.0, exponent - 24) > e.ulps)
        e.ulps = err / std::ldexp(1.0, exponent - 24), e.ulps_at = x;
    } else {
      e.absolute = std::max(e.absolute, err);
    }
  }
  return e;
}

// GELU: in ulps where |GELU| >= 0.1 and z >= -3.
Errors errors(const Mat<float>& z, const Mat<float>& got, double (*exact)(double)) {
  return errors(z, got, exact, [](double x, double want) { return std::abs(want) >= 0.1 && x >= -3; });
}

}  // namespace

TEST_CASE("vectorised GELU and its derivative against erf and exp in double", "[activations]") {
  const int n = 1 << 21;
  Mat<float> z(1, n), y(1, n), d = Mat<float>::Ones(1, n);
  for (int i = 0; i < n; ++i) z(0, i) = float(-12.0 + 24.0 * i / (n - 1));
  activate_block(Activation::gelu, z, y);
  multiply_by_derivative(Activation::gelu, z, d);
  const Errors ey = errors(z, y, gelu_exact), ed = errors(z, d, gelu_derivative_exact);
  std::printf("vectorised GELU: %.2f ulps, %.2e absolute; derivative: %.2f ulps, %.2e absolute\n", ey.ulps,
              ey.absolute, ed.ulps, ed.absolute);
  // Measured (GCC 12, AVX-512): GELU 8.1 ulps and 4.7e-8 absolute, derivative 15.2 ulps (16.6 in an -O1
  // SSE2 build, the sanitizer build's until it became native, which contracts fewer multiply-adds) and 1.1e-7
  // absolute; the scalar formula with erff it replaces (activations.hpp): 6.2 ulps and 8.3e-8 absolute.
  // Bounds: GELU's own 10 ulps; the derivative Phi(z) + z phi(z) adds two terms made by the same erfc and exp
  // kernels, each within GELU's budget, so twice it: 20 ulps (and twice the absolute bound).
  Mat<float> scalar = z.unaryExpr([](float v) { return activate(Activation::gelu, v); });
  std::printf("scalar erff GELU: %.2f ulps, %.2e absolute\n", errors(z, scalar, gelu_exact).ulps,
              errors(z, scalar, gelu_exact).absolute);
  CHECK(ey.ulps <= 10);
  CHECK(ed.ulps <= 20);
  CHECK(ey.absolute <= 1e-7);
  CHECK(ed.absolute <= 2e-7);
}

namespace {

// Finite float inputs: 2^21 spread over [-12, 12], 2^16 over each of [12, 100] and [-100, -12] (SiLU's
// clamped tail starts at 80), +-2^e for e from -149 (the smallest subnormal) to 127, float's largest, +-0.
Mat<float> test_grid() {
  std::vector<float> v;
  const int n = 1 << 21, m = 1 << 16;
  for (int i = 0; i < n; ++i) v.push_back(float(-12.0 + 24.0 * i / (n - 1)));
  for (int i = 0; i < m; ++i)
    for (const float sign : {1.0f, -1.0f}) v.push_back(sign * float(12.0 + 88.0 * i / (m - 1)));
  for (int e = -149; e <= 127; ++e)
    for (const float sign : {1.0f, -1.0f}) v.push_back(sign * std::ldexp(1.0f, e));
  for (const float x : {std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 0.0f, -0.0f})
    v.push_back(x);
  return Eigen::Map<Mat<float>>(v.data(), 1, Eigen::Index(v.size()));
}

// The activation and its derivative of z, vectorised.
std::pair<Mat<float>, Mat<float>> vectorised_values(Activation a, const Mat<float>& z) {
  Mat<float> y(z.rows(), z.cols()), d = Mat<float>::Ones(z.rows(), z.cols());
  activate_block(a, z, y);
  multiply_by_derivative(a, z, d);
  return {y, d};
}

// The double-precision definitions (activations.hpp).
auto exact_of(Activation a) {
  return [a](double x) { return activate(a, x); };
}
auto exact_derivative_of(Activation a) {
  return [a](double x) { return activate_derivative(a, x); };
}

}  // namespace

TEST_CASE("vectorised SiLU and its derivative against the double definitions", "[activations]") {
  const Mat<float> z = test_grid();
  const auto [y, d] = vectorised_values(Activation::silu, z);
  constexpr double tail = act_pieces::kSigmoidTail;
  // SiLU: no cancellation anywhere (sigmoid(z) for z < 0 is e / (1 + e)), so in ulps down to the clamped
  // tail.
  const Errors ey = errors(z, y, exact_of(Activation::silu), [&](double x, double) { return x >= -tail; });
  // SiLU' = s (1 + z (1 - s)) cancels around its zero at z = -1.28: absolute where |SiLU'| < 0.05 there
  // (z in (-1.7, -1.1)); below z = -4, 1 + z (1 - s) < -2.9, no cancellation.
  const Errors ed = errors(z, d, exact_derivative_of(Activation::silu), [&](double x, double want) {
    return x >= -tail && (std::abs(want) >= 0.05 || x < -4);
  });
  const Mat<float> scalar = z.unaryExpr([](float v) { return activate(Activation::silu, v); }),
                   scalar_d = z.unaryExpr([](float v) { return activate_derivative(Activation::silu, v); });
  const Errors es =
      errors(z, scalar, exact_of(Activation::silu), [&](double x, double) { return x >= -tail; });
  const Errors esd = errors(z, scalar_d, exact_derivative_of(Activation::silu), [&](double x, double want) {
    return x >= -tail && (std::abs(want) >= 0.05 || x < -4);
  });
  std::printf(
      "vectorised SiLU: %.2f ulps (z = %g), %.2e absolute; derivative: %.2f ulps (z = %g), %.2e absolute\n",
      ey.ulps, ey.ulps_at, ey.absolute, ed.ulps, ed.ulps_at, ed.absolute);
  std::printf(
      "scalar expf SiLU: %.2f ulps (z = %g), %.2e absolute; derivative: %.2f ulps (z = %g), %.2e absolute\n",
      es.ulps, es.ulps_at, es.absolute, esd.ulps, esd.ulps_at, esd.absolute);
  // Measured (GCC 12; AVX-512 with FMA, and an -O1 SSE2 build without, the sanitizer build's until it
  // became native): SiLU 4.6 / 3.4 ulps
  // (the worst at z = -80 / -14, where Eigen's exp has its largest errors, 2.7 ulps alone) and 1.4e-33
  // absolute in the clamped tail (80 exp(-80)); SiLU' 6.9 / 7.9 ulps at z = -1.06, the edge of the region
  // left to absolute errors, where 1 + z (1 - s) = 0.18 magnifies the rounding of z (1 - s) fivefold, and
  // 2.4e-8 / 2.9e-8 absolute in that region. The scalar expf formula: 2.0 ulps; its SiLU' 8.2 ulps (at
  // z = 16.6, where its 1 - s cancels; ours takes 1 - s from sigmoid(-|z|)) and 2.3e-8 / 2.5e-8 absolute.
  // Bounds: SiLU 6 ulps (exp's 2.7, the division and the product, half an ulp each, with room); SiLU' 12
  // ulps (the fivefold cancellation of a few ulps) and 4e-8 absolute (the scalar formula's own, with room);
  // the tail's 2e-33 is the clamp's own bound.
  CHECK(ey.ulps <= 6);
  CHECK(ed.ulps <= 12);
  CHECK(ey.absolute <= 2e-33);
  CHECK(ed.absolute <= 4e-8);
}

TEST_CASE("vectorised tanh and its derivative against the double definitions", "[activations]") {
  const Mat<float> z = test_grid();
  const auto [y, d] = vectorised_values(Activation::tanh, z);
  constexpr double tail = act_pieces::kSigmoidTail / 2;  // tanh' = 4 e / (1 + e)^2 with e = exp(-2|z|)
  const Errors ey = errors(z, y, exact_of(Activation::tanh), [](double, double) { return true; });
  // tanh' as 1 / cosh^2: the double definition 1 - tanh^2 cancels for large |z| (it is 0 from |z| = 19 on).
  const auto sech2 = [](double x) { return 1.0 / (std::cosh(x) * std::cosh(x)); };
  const Errors ed = errors(z, d, sech2, [&](double x, double) { return std::abs(x) <= tail; });
  const Mat<float> scalar = z.unaryExpr([](float v) { return activate_derivative(Activation::tanh, v); });
  const Errors es = errors(z, scalar, sech2, [&](double x, double) { return std::abs(x) <= tail; });
  std::printf(
      "vectorised tanh: %.2f ulps (z = %g), %.2e absolute; derivative: %.2f ulps (z = %g), %.2e absolute\n",
      ey.ulps, ey.ulps_at, ey.absolute, ed.ulps, ed.ulps_at, ed.absolute);
  std::printf("scalar 1 - tanhf^2: %.2f ulps (z = %g), %.2e absolute\n", es.ulps, es.ulps_at, es.absolute);
  // Measured (GCC 12; AVX-512 with FMA, and an -O1 SSE2 build without, the sanitizer build's until it
  // became native): tanh 4.6 / 6.4 ulps (at
  // z = -6.9 / -5.8; Eigen documents its rational tanh as accurate to "a couple of ulps" on [-8, 8], and it
  // is exactly +-1 beyond, as float's tanh is); tanh' 4.1 / 4.0 ulps where |z| <= 40 (exp's 2.7 ulps and
  // three roundings) and 7.2e-35 absolute beyond (4 exp(-80), the clamp), where the scalar 1 - tanhf^2 is 0
  // from |z| = 9 on: all its relative accuracy lost. Bounds: tanh 8 ulps, tanh' 6 ulps (the measured errors
  // with room for another compiler's contractions), 1e-34 absolute.
  CHECK(ey.ulps <= 8);
  CHECK(ed.ulps <= 6);
  CHECK(ey.absolute == 0);  // subnormal z, the only absolute ones: tanh(z) = z below |z| = 4e-4
  CHECK(ed.absolute <= 1e-34);
}

TEST_CASE("vectorised SiLU and tanh at +-inf, zero and NaN", "[activations]") {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Mat<float> z(1, 5);
  z << inf, -inf, 0.0f, -0.0f, nan;
  const auto [sy, sd] = vectorised_values(Activation::silu, z);
  // The limits: SiLU(+inf) = inf, SiLU(-inf) = 0, SiLU' 1 and 0 (the clamped tail: within 2e-33).
  CHECK(sy(0, 0) == inf);
  CHECK(std::abs(sy(0, 1)) <= 2e-33);
  CHECK(sd(0, 0) == 1.0f);
  CHECK(std::abs(sd(0, 1)) <= 2e-33);
  const auto [ty, td] = vectorised_values(Activation::tanh, z);
  CHECK(ty(0, 0) == 1.0f);
  CHECK(ty(0, 1) == -1.0f);
  CHECK(td(0, 0) <= 1e-34);  // 4 exp(-80), the clamped tail
  CHECK(td(0, 1) <= 1e-34);
  for (const int i : {2, 3}) {
    CHECK(sy(0, i) == 0.0f);
    CHECK(sd(0, i) == 0.5f);
    CHECK(ty(0, i) == 0.0f);
    CHECK(td(0, i) == 1.0f);
  }
  CHECK(std::isnan(sy(0, 4)));
  CHECK(std::isnan(sd(0, 4)));
  CHECK(std::isnan(ty(0, 4)));
  CHECK(std::isnan(td(0, 4)));
}

// The MLP's backward rebuilds the activations from the kept gate; they must be the forward's bits. And an
// entry's bits must not depend on its position in a row: the same inputs shifted by 7 entries give the same.
TEST_CASE("vectorised activations: the kept gate rebuilds the same bits, whatever the position",
          "[activations]") {
  const Mat<float> z = test_grid();
  const Eigen::Index n = z.cols(), shift = 7;
  for (const Activation a : {Activation::gelu, Activation::silu, Activation::tanh}) {
    INFO("activation " << int(a));
    std::vector<float> gate(keeps_gate<float>(a) ? n : 0), y(n), rebuilt(n), shifted(n - shift);
    activate_row(a, z.data(), gate.empty() ? nullptr : gate.data(), y.data(), n);
    if (!gate.empty()) {
      activate_row_from_gate(a, z.data(), gate.data(), rebuilt.data(), n);
      CHECK(std::memcmp(y.data(), rebuilt.data(), n * sizeof(float)) == 0);
    }
    activate_row(a, z.data() + shift, nullptr, shifted.data(), n - shift);
    CHECK(std::memcmp(y.data() + shift, shifted.data(), (n - shift) * sizeof(float)) == 0);
  }
}

// The CPU MLP keeps GELU's Phi(h) and SiLU's sigmoid(-|h|) (of g for SwiGLU) from the forward and builds the
// backward's activations and derivatives from them (cpu_branches.cpp); tanh' comes from exp. Its float32
// gradients agree with float64's (the scalar definitions, same weights) to float rounding: hidden 200 is
// not a whole number of the kernels' 64-entry pieces, so padded pieces are used.
TEST_CASE("float32 MLP gradients with the vectorised activations agree with float64", "[activations]") {
  namespace vocab = normsim::vocab;
  for (const auto act : {vocab::Activation::gelu, vocab::Activation::silu, vocab::Activation::tanh,
                         vocab::Activation::swiglu, vocab::Activation::relu, vocab::Activation::linear}) {
    INFO("activation " << normsim::vocab::name(act));
    Config c;
    c.sublayer = vocab::Sublayer::mlp;
    c.placement = vocab::Placement::pre;
    c.activation = act;
    c.width = 50;
    c.mlp_ratio = 4;
    c.tokens = 6;
    c.depth = 4;
    const SampleTensors f = simulate_sample_cpu<float>(c, 0);
    c.precision = normsim::vocab::Precision::float64;
    const SampleTensors d = simulate_sample_cpu<double>(c, 0);
    REQUIRE(f.grad.size() == d.grad.size());
    // float32 rounding (6e-8 relative per operation) through a few hundred accumulated terms per entry and
    // 4 sublayers: measured differences are at most 6.1e-7 relative (stream gradients, SwiGLU; 2.5e-7 to
    // 4.1e-7 for the others) and 8e-8 (weight gradients' norms); 1e-4 leaves room and still fails for a
    // wrong derivative, which is off by O(1).
    double grad = 0, gradw = 0;
    for (std::size_t l = 0; l < f.grad.size(); ++l) {
      grad = std::max(grad, (f.grad[l] - d.grad[l]).norm() / d.grad[l].norm());
      CHECK((f.grad[l] - d.grad[l]).norm() <= 1e-4 * d.grad[l].norm());
    }
    for (int k = 0; k < c.depth; ++k)
      for (const WeightKind w : {WeightKind::w1, WeightKind::w2, WeightKind::wgate}) {
        if (w == WeightKind::wgate && act != vocab::Activation::swiglu) continue;
        gradw = std::max(gradw, std::abs(f.gradw[k][int(w)] / d.gradw[k][int(w)] - 1));
        CHECK(f.gradw[k][int(w)] == Approx(d.gradw[k][int(w)]).epsilon(1e-4));
      }
    std::printf("%s: float32 against float64, gradients %.1e, weight gradients %.1e relative\n",
                std::string(normsim::vocab::name(act)).c_str(), grad, gradw);
  }
}
