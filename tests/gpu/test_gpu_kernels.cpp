// Every kernel of gpu/kernels.hpp against its CPU twin (gpu/cpu_twins.hpp), float and double, at sizes
// that are not multiples of any block size (32, 128, 256, 1024). Tolerances are mixed,
// |gpu - cpu| <= tol + |cpu| * eps, and each is justified where it is chosen.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "gpu/cpu_twins.hpp"
#include "gpu/device_buffer.hpp"
#include "gpu/kernels.hpp"
#include "test_util_gpu.hpp"

using normsim::gpu::DeviceBuffer;
using normsim::test::require_close;
namespace gpu = normsim::gpu;
namespace sim = normsim::sim;

namespace {

template <class R>
std::vector<R> random_vector(std::size_t n, unsigned seed, double scale = 1.0) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0.0, scale);
  std::vector<R> v(n);
  for (auto& x : v) x = R(dist(gen));
  return v;
}

template <class R>
constexpr double ulp() {
  return std::numeric_limits<R>::epsilon();
}

const std::vector<std::uint32_t> kSamples = {0, 5, 2};  // not contiguous, not sorted
constexpr int kS = 3, kT = 7, kD = 37;
constexpr std::size_t kN = 100003;  // elementwise size: prime, over several blocks and a partial one

}  // namespace

// gaussian_at on the device and the host: the same code, with CUDA's logf/sinf/cosf (<= 2 ulp, CUDA
// programming guide's accuracy table) against glibc's (<= 1 ulp): |z| <= 5.8, so 8 float ulps relative
// plus 1e-6 absolute (values near a zero of cos) cover it.
TEMPLATE_TEST_CASE("gaussian_fill matches its CPU twin", "[kernel]", float, double) {
  using R = TestType;
  const std::size_t n = 1237;
  const auto d_ids = DeviceBuffer<std::uint32_t>::from_host(kSamples);
  DeviceBuffer<R> d_out(n * kS);
  gpu::gaussian_fill(d_out.get(), n, kS, d_ids.get(), 42, 3, sim::Stream::w2, 0.7);
  std::vector<R> ref(n * kS);
  gpu::cpu::gaussian_fill(ref.data(), n, kS, kSamples.data(), 42, 3, sim::Stream::w2, 0.7);
  const std::vector<R> got = d_out.to_host();
  require_close(got, ref, 1e-6, 8 * ulp<float>());
  std::size_t identical = 0;
  for (std::size_t i = 0; i < got.size(); ++i) identical += got[i] == ref[i];
  // The measured figure docs/gpu.md quotes (device logf/sinf/cosf against the host's libm).
  std::printf("gaussian_fill<%s>: %zu of %zu draws bit-identical to the host twin\n",
              sizeof(R) == 4 ? "float" : "double", identical, got.size());
}

// Batch 0 (a run without steps) and a later batch of the training loop's fresh batches.
TEMPLATE_TEST_CASE("input_fill and loss_gradient match their CPU twins", "[kernel]", float, double) {
  using R = TestType;
  const auto d_ids = DeviceBuffer<std::uint32_t>::from_host(kSamples);
  const std::size_t n = std::size_t(kS) * kT * kD;
  for (const std::uint32_t batch : {0u, 3u}) {
    DeviceBuffer<R> d_x(n);
    gpu::input_fill(d_x.get(), kS, d_ids.get(), kT, kD, 7, 1.5, 0.3, batch);
    std::vector<R> x(n);
    gpu::cpu::input_fill(x.data(), kS, kSamples.data(), kT, kD, 7, 1.5, 0.3, batch);
    require_close(d_x.to_host(), x, 2e-6, 8 * ulp<float>());  // Gaussian draws as above, times 1.5
    for (const bool mse : {false, true}) {
      DeviceBuffer<R> d_dy(n);
      const auto d_y = DeviceBuffer<R>::from_host(x);
      gpu::loss_gradient(d_y.get(), d_dy.get(), kS, d_ids.get(), kT, kD, 7, mse, batch);
      std::vector<R> dy(n);
      gpu::cpu::loss_gradient(x.data(), dy.data(), kS, kSamples.data(), kT, kD, 7, mse, batch);
      require_close(d_dy.to_host(), dy, 2e-6, 8 * ulp<float>());
    }
  }
}

// Integer ids from the same Philox bits on both sides: the one-hot rows are equal exactly, at a vocabulary
// that is no multiple of the block size.
TEMPLATE_TEST_CASE("token_onehot_fill matches its CPU twin", "[kernel]", float, double) {
  using R = TestType;
  const auto d_ids = DeviceBuffer<std::uint32_t>::from_host(kSamples);
  const int vocab = 1031;
  const std::size_t n = std::size_t(kS) * kT * vocab;
  for (const std::uint32_t batch : {0u, 3u}) {
    DeviceBuffer<R> d_u(n);
    gpu::token_onehot_fill(d_u.get(), kS, d_ids.get(), kT, vocab, 7, batch);
    std::vector<R> u(n);
    gpu::cpu::token_onehot_fill(u.data(), kS, kSamples.data(), kT, vocab, 7, batch);
    CHECK(d_u.to_host() == u);
  }
}

// Row sums run in double on both sides, in different orders (tree vs. sequential): the sums agree to
// ~n * 1e-16; the outputs then round to R, so 4 ulps of R relative (and absolute, near 0) suffice.
TEMPLATE_TEST_CASE("row_norm_forward and row_norm_backward match their CPU twins", "[kernel]", float,
                   double) {
  using R = TestType;
  for (const int n : {37, 300, 1029}) {  // the 32-, 128- and 256-thread launch paths
    for (const auto kind : {sim::NormKind::layernorm, sim::NormKind::rmsnorm}) {
      const int rows = 13;
      const auto x = random_vector<R>(std::size_t(rows) * n, 1, 2.0);
      const auto dy = random_vector<R>(std::size_t(rows) * n, 2);
      const auto d_x = DeviceBuffer<R>::from_host(x), d_dy = DeviceBuffer<R>::from_host(dy);
      DeviceBuffer<R> d_y(x.size());
      DeviceBuffer<double> d_rstd(rows);
      gpu::row_norm_forward(d_x.get(), d_y.get(), d_rstd.get(), rows, n, kind, 1.3, 1e-5);
      std::vector<R> y(x.size());
      std::vector<double> rstd(rows);
      gpu::cpu::row_norm_forward(x.data(), y.data(), rstd.data(), rows, n, kind, 1.3, 1e-5);
      const double t = 4 * ulp<R>();
      require_close(d_y.to_host(), y, t, t);
      require_close(d_rstd.to_host(), rstd, 0.0, 1e-13);
      for (const bool acc : {false, true}) {
        auto d_dx = DeviceBuffer<R>::from_host(x);  // accumulate onto x
        std::vector<R> dx = x;
        gpu::row_norm_backward(d_y.get(), d_dy.get(), d_dx.get(), d_rstd.get(), rows, n, kind, 1.3, acc);
        gpu::cpu::row_norm_backward(y.data(), dy.data(), dx.data(), rstd.data(), rows, n, kind, 1.3, acc);
        require_close(d_dx.to_host(), dx, 8 * ulp<R>(), 8 * ulp<R>());  // inputs y already differ by ulps
      }
    }
  }
}

// Device erf/exp/tanh are within 2 ulps of correctly rounded (CUDA accuracy table), glibc's within 1;
// the derivative multiplies two such values: 8 ulps relative, 8 ulps absolute near zero.
TEMPLATE_TEST_CASE("activations and SwiGLU match their CPU twins", "[kernel]", float, double) {
  using R = TestType;
  const auto h = random_vector<R>(kN, 3, 2.0), g = random_vector<R>(kN, 4, 2.0), da = random_vector<R>(kN, 5);
  const auto d_h = DeviceBuffer<R>::from_host(h), d_g = DeviceBuffer<R>::from_host(g),
             d_da = DeviceBuffer<R>::from_host(da);
  const double t = 8 * ulp<R>();
  for (const auto act : {sim::Activation::relu, sim::Activation::gelu, sim::Activation::silu,
                         sim::Activation::tanh, sim::Activation::linear}) {
    DeviceBuffer<R> d_out(kN);
    std::vector<R> out(kN);
    gpu::activation_forward(d_h.get(), d_out.get(), kN, act);
    gpu::cpu::activation_forward(h.data(), out.data(), kN, act);
    require_close(d_out.to_host(), out, t, t);
    gpu::activation_backward(d_h.get(), d_da.get(), d_out.get(), kN, act);
    gpu::cpu::activation_backward(h.data(), da.data(), out.data(), kN, act);
    require_close(d_out.to_host(), out, t, t);
  }
  DeviceBuffer<R> d_a(kN), d_dg(kN), d_dh(kN);
  std::vector<R> a(kN), dg(kN), dh(kN);
  gpu::swiglu_forward(d_g.get(), d_h.get(), d_a.get(), kN);
  gpu::cpu::swiglu_forward(g.data(), h.data(), a.data(), kN);
  require_close(d_a.to_host(), a, t, t);
  gpu::swiglu_backward(d_g.get(), d_h.get(), d_da.get(), d_dg.get(), d_dh.get(), kN);
  gpu::cpu::swiglu_backward(g.data(), h.data(), da.data(), dg.data(), dh.data(), kN);
  require_close(d_dg.to_host(), dg, t, t);
  require_close(d_dh.to_host(), dh, t, t);
}

// The bf16 rounding (sim/bf16_bits.hpp): integer operations on the float's bits, the same code on both
// sides, so the twins agree bit for bit, on Gaussian entries and on every special case (ties, subnormals,
// NaN payloads, overflow, infinities), both outputs and the rounding in place.
TEST_CASE("round_to_bf16 matches its CPU twin bit for bit", "[kernel][bf16]") {
  std::vector<float> x = random_vector<float>(kN, 8, 3.0);
  const std::uint32_t special[] = {0x3F80'8000u, 0x3F81'8000u, 0x0000'8000u, 0x0001'8000u, 0x807F'FFFFu,
                                   0x7F7F'FFFFu, 0x7F80'0000u, 0xFF80'0000u, 0x7F80'0001u, 0xFFFF'FFFFu};
  for (std::size_t i = 0; i < std::size(special); ++i) std::memcpy(&x[i], &special[i], 4);
  auto d_x = DeviceBuffer<float>::from_host(x);
  DeviceBuffer<float> d_rounded(kN);
  DeviceBuffer<std::uint16_t> d_bits(kN);
  std::vector<float> rounded(kN);
  std::vector<std::uint16_t> bits(kN);
  gpu::round_to_bf16(d_x.get(), d_rounded.get(), d_bits.get(), kN);
  gpu::cpu::round_to_bf16(x.data(), rounded.data(), bits.data(), kN);
  const std::vector<float> got = d_rounded.to_host();
  CHECK(d_bits.to_host() == bits);
  CHECK(std::memcmp(got.data(), rounded.data(), kN * sizeof(float)) == 0);
  gpu::round_to_bf16(d_x.get(), d_x.get(), nullptr, kN);  // in place, no bits
  const std::vector<float> in_place = d_x.to_host();
  CHECK(std::memcmp(in_place.data(), rounded.data(), kN * sizeof(float)) == 0);
}

// The draw straight into bf16 bits is, on the device, gaussian_fill<float> then round_to_bf16 bit for bit
// (the same float32 from the same code, rounded by the same integer operations). Against the host twin the
// float32 draws may differ by a few ulps (the gaussian_fill case above), which the rounding either absorbs
// or turns into one bf16 ulp: bits equal or adjacent, and mostly equal (a few float ulps cross a bf16
// rounding boundary with probability about 2^-16 per ulp; 1 % is far above that and far below a bug's).
TEST_CASE("gaussian_fill_bf16 is gaussian_fill<float> then round_to_bf16", "[kernel][bf16]") {
  const std::size_t n = 4099;  // not a multiple of 4: a partial Philox block per sample
  const auto d_ids = DeviceBuffer<std::uint32_t>::from_host(kSamples);
  DeviceBuffer<std::uint16_t> d_bits(n * kS), d_rounded_bits(n * kS);
  DeviceBuffer<float> d_float(n * kS);
  gpu::gaussian_fill_bf16(d_bits.get(), n, kS, d_ids.get(), 42, 3, sim::Stream::w2, 0.7);
  gpu::gaussian_fill(d_float.get(), n, kS, d_ids.get(), 42, 3, sim::Stream::w2, 0.7);
  gpu::round_to_bf16(d_float.get(), nullptr, d_rounded_bits.get(), n * kS);
  const std::vector<std::uint16_t> got = d_bits.to_host();
  CHECK(got == d_rounded_bits.to_host());
  std::vector<std::uint16_t> twin(n * kS);
  gpu::cpu::gaussian_fill_bf16(twin.data(), n, kS, kSamples.data(), 42, 3, sim::Stream::w2, 0.7);
  std::size_t same = 0, adjacent = 0;
  for (std::size_t i = 0; i < twin.size(); ++i) {
    same += got[i] == twin[i];
    adjacent += got[i] != twin[i] && (got[i] == twin[i] + 1 || got[i] + 1 == twin[i]);
  }
  CHECK(same + adjacent == twin.size());
  CHECK(double(adjacent) <= 0.01 * double(twin.size()));
}

// DyT and Derf, forward and backward (= and +=): computed in double from R inputs and rounded once, so the
// twins differ only by the device's tanh/erf/exp (<= 2 ulps of double) before that rounding: 2 ulps of R
// cover it, 4 for the backward's product of two such values and its accumulate.
TEMPLATE_TEST_CASE("DyT and Derf match their CPU twins", "[kernel][dyt]", float, double) {
  using R = TestType;
  const auto x = random_vector<R>(kN, 6, 3.0), dy = random_vector<R>(kN, 7);
  const auto d_x = DeviceBuffer<R>::from_host(x), d_dy = DeviceBuffer<R>::from_host(dy);
  for (const sim::PointwiseNorm f : {sim::PointwiseNorm{normsim::vocab::Norm::dyt, 1.3, 0.5, 0.0},
                                     sim::PointwiseNorm{normsim::vocab::Norm::derf, 0.8, 0.7, -0.3}}) {
    DeviceBuffer<R> d_y(kN);
    std::vector<R> y(kN);
    gpu::pointwise_norm_forward(d_x.get(), d_y.get(), kN, f);
    gpu::cpu::pointwise_norm_forward(x.data(), y.data(), kN, f);
    require_close(d_y.to_host(), y, 2 * ulp<R>(), 2 * ulp<R>());
    for (const bool acc : {false, true}) {
      auto d_dx = DeviceBuffer<R>::from_host(x);  // accumulate onto x
      std::vector<R> dx = x;
      gpu::pointwise_norm_backward(d_x.get(), d_dy.get(), d_dx.get(), kN, f, acc);
      gpu::cpu::pointwise_norm_backward(x.data(), dy.data(), dx.data(), kN, f, acc);
      require_close(d_dx.to_host(), dx, 4 * ulp<R>(), 4 * ulp<R>());
    }
  }
}

// The attention output gate, elementwise (group 1) and headwise (group 37 of d = 37 * 3, and 5 of 35), over
// S T rows of d: in double from R inputs, rounded once per output. The twins differ by the device's exp (<= 2
// ulps of double) and, for dz, the order nvcc contracts the group's sum (a sum of <= 37 products in double:
// far below R's rounding), so 4 ulps of R with a margin of 4 ulps on near-zero dz.
TEMPLATE_TEST_CASE("attention_gate matches its CPU twin", "[kernel][gate]", float, double) {
  using R = TestType;
  for (const auto& [d, group] : {std::pair{kD, 1}, std::pair{3 * kD, kD}, std::pair{35, 5}}) {
    const int rows = kS * kT, G = d / group;
    const auto o = random_vector<R>(std::size_t(rows) * d, 6),
               dy = random_vector<R>(std::size_t(rows) * d, 7),
               z = random_vector<R>(std::size_t(rows) * G, 8, 2.0);
    const auto d_o = DeviceBuffer<R>::from_host(o), d_dy = DeviceBuffer<R>::from_host(dy),
               d_z = DeviceBuffer<R>::from_host(z);
    DeviceBuffer<R> d_y(o.size()), d_do(o.size()), d_dz(z.size());
    std::vector<R> y(o.size()), d_o_ref(o.size()), dz(z.size());
    gpu::attention_gate_forward(d_o.get(), d_z.get(), d_y.get(), rows, d, group);
    gpu::cpu::attention_gate_forward(o.data(), z.data(), y.data(), rows, d, group);
    require_close(d_y.to_host(), y, 2 * ulp<R>(), 2 * ulp<R>());
    gpu::attention_gate_backward(d_o.get(), d_z.get(), d_dy.get(), d_do.get(), d_dz.get(), rows, d, group);
    gpu::cpu::attention_gate_backward(o.data(), z.data(), dy.data(), d_o_ref.data(), dz.data(), rows, d,
                                      group);
    require_close(d_do.to_host(), d_o_ref, 2 * ulp<R>(), 2 * ulp<R>());
    require_close(d_dz.to_host(), dz, 4 * ulp<R>(), 4 * ulp<R>());
  }
}

// nGPT's unit-norm weights: S matrices of 37 x 45 (awkward sizes), columns and rows. Each vector's squares
// are summed in double in the same order on both sides, then one scale per vector: the device's sqrt and
// division are correctly rounded in double, so each entry differs by at most one rounding to R (1 ulp); 2
// allow a fused multiply in the square sum.
TEMPLATE_TEST_CASE("unit_norm_vectors matches its CPU twin", "[kernel][unit]", float, double) {
  using R = TestType;
  const int rows = 37, cols = 45;
  for (const bool columns : {true, false}) {
    const auto w = random_vector<R>(std::size_t(kS) * rows * cols, 9);
    auto d_w = DeviceBuffer<R>::from_host(w);
    std::vector<R> ref = w;
    const normsim::sim::UnitNorm u{columns, 1.7};
    gpu::unit_norm_vectors(d_w.get(), kS, rows, cols, u);
    gpu::cpu::unit_norm_vectors(ref.data(), kS, rows, cols, u);
    require_close(d_w.to_host(), ref, 2 * ulp<R>(), 2 * ulp<R>());
  }
}

// One multiply and one add: nvcc may fuse them (one rounding instead of two), hence 2 ulps.
TEMPLATE_TEST_CASE("scaled_sum matches its CPU twin", "[kernel]", float, double) {
  using R = TestType;
  const std::size_t n = kN / kS;
  const auto a = random_vector<R>(n * kS, 6), b = random_vector<R>(n * kS, 7),
             o = random_vector<R>(n * kS, 8);
  const std::vector<double> s = {0.5, -1.25, 3.0};
  const auto d_a = DeviceBuffer<R>::from_host(a), d_b = DeviceBuffer<R>::from_host(b);
  const auto d_s = DeviceBuffer<double>::from_host(s);
  for (const bool acc : {false, true})
    for (const bool use_s : {false, true})
      for (const bool use_b : {false, true}) {
        auto d_o = DeviceBuffer<R>::from_host(o);
        std::vector<R> ref = o;
        gpu::scaled_sum(d_o.get(), d_a.get(), use_s ? d_s.get() : nullptr, use_b ? d_b.get() : nullptr, n, kS,
                        acc);
        gpu::cpu::scaled_sum(ref.data(), a.data(), use_s ? s.data() : nullptr, use_b ? b.data() : nullptr, n,
                             kS, acc);
        require_close(d_o.to_host(), ref, 2 * ulp<R>(), 2 * ulp<R>());
      }
}

// Softmax in double on both sides, then rounded to R. Device exp(double) is within 1 ulp of the exact
// value (CUDA C++ Programming Guide, "Double-Precision Floating-Point Functions"; glibc's within 1), so
// one term differs by <= 2 ulps; the row's sum of <= T positive terms in a different order (a block
// reduction against a serial loop) differs by <= (T - 1) 2^-53 of itself (Higham, Accuracy and Stability,
// eq. 4.4), and the division adds 1/2 ulp each side. Relative bound: 3 ulps + T 2^-53 in double, which
// rounding to float hides behind float's 2 ulps (absolute too: p <= 1). At T = 513 the double bound is
// 2.6e-14, where a flat 2 ulps (4.4e-16) failed 26 of 527,877 entries on an H200 (issue 29).
template <class R>
double softmax_eps(int T) {
  return 3 * ulp<R>() + T * std::ldexp(1.0, -53);
}

TEMPLATE_TEST_CASE("softmax_forward and softmax_backward match their CPU twins", "[kernel]", float, double) {
  using R = TestType;
  for (const int T : {7, 33, 130, 513}) {
    for (const bool causal : {false, true}) {
      const int rows = 2 * T + 3;  // several heads' worth of rows, the last one partial
      const auto sc = random_vector<R>(std::size_t(rows) * T, 9, 3.0);
      auto d_p = DeviceBuffer<R>::from_host(sc);
      std::vector<R> p = sc;
      gpu::softmax_forward(d_p.get(), rows, T, causal);
      gpu::cpu::softmax_forward(p.data(), rows, T, causal);
      require_close(d_p.to_host(), p, softmax_eps<R>(T), softmax_eps<R>(T));
      const auto dp0 = random_vector<R>(p.size(), 10);
      auto d_dp = DeviceBuffer<R>::from_host(dp0);
      std::vector<R> dp = dp0;
      gpu::softmax_backward(d_p.get(), d_dp.get(), rows, T, 0.125);
      gpu::cpu::softmax_backward(p.data(), dp.data(), rows, T, 0.125);
      // p already differs as above, and dot = sum_s dp_s p_s is a T-term sum in another order: its error,
      // T 2^-53 of sum |dp_s p_s| <= max |dp| (~4 for these Gaussians), reaches dp_s - dot absolutely.
      const double t = 8 * ulp<R>() + softmax_eps<R>(T) + 4 * T * std::ldexp(1.0, -53);
      require_close(d_dp.to_host(), dp, t, t);
    }
  }
}

// Double sums of n products in different orders: relative error <= n * 2^-53 of sum |a b|, which for
// these Gaussian inputs is ~ n; 1e-9 absolute is far above that and far below any real disagreement.
// The routed MLP's kernels: 37 rows of E = 7 logits (k = 3) and n = 45 entries. The gates are computed in
// double in both (sim/moe_gate.hpp); the device's exp may differ from the host's by an ulp of double, far
// below the float result's rounding: tolerance 1e-6 + 1e-5 relative in float, 1e-12 + 1e-10 in double.
TEMPLATE_TEST_CASE("the routed MLP's kernels match their CPU twins", "[kernel][moe]", float, double) {
  using R = TestType;
  constexpr int kRows = 37, kE = 7, kTopK = 3, kN = 45;
  const double tol = std::is_same_v<R, float> ? 1e-6 : 1e-12, eps = std::is_same_v<R, float> ? 1e-5 : 1e-10;
  const auto z = random_vector<R>(std::size_t(kRows) * kE, 31),
             dg = random_vector<R>(std::size_t(kRows) * kE, 32);
  const auto y = random_vector<R>(std::size_t(kRows) * kN, 33),
             dout = random_vector<R>(std::size_t(kRows) * kN, 34);
  const auto d_z = DeviceBuffer<R>::from_host(z), d_dg = DeviceBuffer<R>::from_host(dg);
  const auto d_y = DeviceBuffer<R>::from_host(y), d_dout = DeviceBuffer<R>::from_host(dout);
  for (const bool renormalized : {true, false}) {
    std::vector<R> g(z.size()), dz(z.size());
    DeviceBuffer<R> d_g(z.size()), d_dz(z.size());
    gpu::moe_gates(d_z.get(), d_g.get(), kRows, kE, kTopK, renormalized);
    gpu::cpu::moe_gates(z.data(), g.data(), kRows, kE, kTopK, renormalized);
    require_close(d_g.to_host(), g, tol, eps);
    gpu::moe_gates_backward(d_z.get(), d_dg.get(), d_dz.get(), kRows, kE, kTopK, renormalized);
    gpu::cpu::moe_gates_backward(z.data(), dg.data(), dz.data(), kRows, kE, kTopK, renormalized);
    require_close(d_dz.to_host(), dz, tol, eps);
  }
  std::vector<R> out = dout, grad = dg;
  auto d_out = DeviceBuffer<R>::from_host(out), d_grad = DeviceBuffer<R>::from_host(grad);
  for (const bool accumulate : {false, true}) {
    gpu::moe_gate_rows(d_out.get(), d_dg.get(), d_y.get(), kRows, kN, kE, 4, accumulate);
    gpu::cpu::moe_gate_rows(out.data(), dg.data(), y.data(), kRows, kN, kE, 4, accumulate);
    require_close(d_out.to_host(), out, tol, eps);
  }
  gpu::moe_gate_gradient(d_dout.get(), d_y.get(), d_grad.get(), kRows, kN, kE, 2);
  gpu::cpu::moe_gate_gradient(dout.data(), y.data(), grad.data(), kRows, kN, kE, 2);
  require_close(d_grad.to_host(), grad, tol, eps);
}

TEMPLATE_TEST_CASE("sample_dot matches its CPU twin", "[kernel]", float, double) {
  using R = TestType;
  const std::size_t n = kN / kS;
  const auto a = random_vector<R>(n * kS, 11), b = random_vector<R>(n * kS, 12);
  const auto d_a = DeviceBuffer<R>::from_host(a), d_b = DeviceBuffer<R>::from_host(b);
  DeviceBuffer<double> d_out(kS);
  gpu::sample_dot(d_a.get(), d_b.get(), n, kS, d_out.get());
  std::vector<double> out(kS);
  gpu::cpu::sample_dot(a.data(), b.data(), n, kS, out.data());
  require_close(d_out.to_host(), out, 1e-9, 1e-12);
}

// A permutation: exact.
TEMPLATE_TEST_CASE("swap_middle_axes matches its CPU twin", "[kernel]", float, double) {
  using R = TestType;
  const int S = 3, A = 37, B = 5, n = 9;
  const auto x = random_vector<R>(std::size_t(S) * A * B * n, 13);
  const auto d_x = DeviceBuffer<R>::from_host(x);
  DeviceBuffer<R> d_y(x.size());
  gpu::swap_middle_axes(d_x.get(), d_y.get(), S, A, B, n);
  std::vector<R> y(x.size());
  gpu::cpu::swap_middle_axes(x.data(), y.data(), S, A, B, n);
  require_close(d_y.to_host(), y, 0.0, 0.0);
}

// A maximum is exact whatever the grid (the kernel merges its blocks' maxima by atomicMax on the bits); a
// non-finite entry makes its sample's result NaN. Sizes from under one block to several hundred blocks per
// sample; sample 1 holds an infinity, sample 2 a NaN (in the last block) where n allows, sample 3 zeros.
TEMPLATE_TEST_CASE("sample_max_abs matches its CPU twin", "[kernel]", float, double) {
  using R = TestType;
  const int S = 4;
  for (const std::size_t n : {std::size_t(1), std::size_t(200), kN / kS, std::size_t(1) << 21}) {
    auto a = random_vector<R>(n * S, 14, 1e3);
    a[n + n / 2] = std::numeric_limits<R>::infinity();
    a[2 * n + n - 1] = std::numeric_limits<R>::quiet_NaN();
    std::fill(a.begin() + std::ptrdiff_t(3 * n), a.end(), R(0));
    const auto d_a = DeviceBuffer<R>::from_host(a);
    DeviceBuffer<double> d_out(S);
    gpu::sample_max_abs(d_a.get(), n, S, d_out.get());
    std::vector<double> out(S);
    gpu::cpu::sample_max_abs(a.data(), n, S, out.data());
    INFO("n = " << n);
    CHECK(std::isnan(out[1]));
    CHECK(out[3] == 0);
    require_close(d_out.to_host(), out, 0.0, 0.0);
  }
}

// frexp and ldexp are exact on both sides.
TEST_CASE("power_of_two_scales matches its CPU twin", "[kernel]") {
  const std::vector<double> m = {1e19,
                                 0.75,
                                 1.0,
                                 3e-30,
                                 0.0,
                                 std::numeric_limits<double>::quiet_NaN(),
                                 std::numeric_limits<double>::infinity()};
  const int S = int(m.size());
  const auto d_m = DeviceBuffer<double>::from_host(m);
  DeviceBuffer<double> d_f(S);
  gpu::power_of_two_scales(d_m.get(), d_f.get(), S);
  std::vector<double> f(S);
  gpu::cpu::power_of_two_scales(m.data(), f.data(), S);
  CHECK(f[1] == 1.0);
  CHECK(f[2] == 0.5);
  CHECK(f[4] == 1.0);
  require_close(d_f.to_host(), f, 0.0, 0.0);
}

// Double sums of n squares in different orders, as sample_dot.
TEMPLATE_TEST_CASE("sample_distance_sq matches its CPU twin", "[kernel][update]", float, double) {
  using R = TestType;
  const std::size_t n = kN / kS;
  const auto a = random_vector<R>(n * kS, 15), b = random_vector<R>(n * kS, 16);
  const auto d_a = DeviceBuffer<R>::from_host(a), d_b = DeviceBuffer<R>::from_host(b);
  DeviceBuffer<double> d_out(kS);
  gpu::sample_distance_sq(d_a.get(), d_b.get(), n, kS, d_out.get());
  std::vector<double> out(kS);
  gpu::cpu::sample_distance_sq(a.data(), b.data(), n, kS, out.data());
  require_close(d_out.to_host(), out, 1e-9, 1e-12);
}

// One product and one subtraction per entry (Adam's quotient in double is correctly rounded on both sides);
// the device may fuse w - g lr into one FMA, which rounds once instead of twice: 2 ulps of w.
TEMPLATE_TEST_CASE("gradient_step matches its CPU twin", "[kernel][update]", float, double) {
  using R = TestType;
  const auto w0 = random_vector<R>(kN, 17), g = random_vector<R>(kN, 18, 3.0);
  const auto d_g = DeviceBuffer<R>::from_host(g);
  for (const bool adam : {false, true}) {
    auto d_w = DeviceBuffer<R>::from_host(w0);
    gpu::gradient_step(d_w.get(), d_g.get(), kN, 0.01, adam, 1e-8);
    std::vector<R> w = w0;
    gpu::cpu::gradient_step(w.data(), g.data(), kN, 0.01, adam, 1e-8);
    require_close(d_w.to_host(), w, 2 * ulp<R>(), 2 * ulp<R>());
  }
}

// The training loop's Adam: m and v move in double and round once to R on both sides (the device may fuse a
// product and a sum into one FMA: 2 ulps of R); the displacement's quotient is double's sqrt and division,
// correctly rounded on both sides, and D - step * mult may fuse likewise: 2 ulps of R relative, plus 2 ulps
// of the step (lr = 0.01) where D is near 0.
TEMPLATE_TEST_CASE("adam_accumulate and adam_displace match their CPU twins", "[kernel][update]", float,
                   double) {
  using R = TestType;
  const auto g = random_vector<R>(kN, 19, 3.0), m0 = random_vector<R>(kN, 20, 0.1);
  auto v0 = random_vector<R>(kN, 21, 0.1);
  for (R& x : v0) x = x * x;
  const sim::AdamStep moments{0.01, 1e-8, 0.9, 0.999, 1, 1}, step{0.01, 1e-8, 0.9, 0.999, 0.19, 0.002};
  auto d_m = DeviceBuffer<R>::from_host(m0), d_v = DeviceBuffer<R>::from_host(v0);
  const auto d_g = DeviceBuffer<R>::from_host(g);
  gpu::adam_accumulate(d_g.get(), d_m.get(), d_v.get(), kN, 1.5, moments);
  std::vector<R> m = m0, v = v0;
  gpu::cpu::adam_accumulate(g.data(), m.data(), v.data(), kN, 1.5, moments);
  require_close(d_m.to_host(), m, 2 * ulp<R>(), 2 * ulp<R>());
  require_close(d_v.to_host(), v, 2 * ulp<R>(), 2 * ulp<R>());
  const auto d0 = random_vector<R>(kN, 22, 0.01);
  auto d_d = DeviceBuffer<R>::from_host(d0);
  const auto d_m1 = DeviceBuffer<R>::from_host(m), d_v1 = DeviceBuffer<R>::from_host(v);
  gpu::adam_displace(d_d.get(), d_m1.get(), d_v1.get(), kN, 1.5, step);
  std::vector<R> d = d0;
  gpu::cpu::adam_displace(d.data(), m.data(), v.data(), kN, 1.5, step);
  double largest_step = 0;
  for (std::size_t i = 0; i < kN; ++i) largest_step = std::max(largest_step, std::abs(double(d[i] - d0[i])));
  require_close(d_d.to_host(), d, 2 * ulp<R>() * largest_step, 2 * ulp<R>());
}

// Double sums of n absolute values in different orders (tree vs. sequential), with and without b.
TEMPLATE_TEST_CASE("sample_abs_distance matches its CPU twin", "[kernel][update]", float, double) {
  using R = TestType;
  const std::size_t n = kN / kS;
  const auto a = random_vector<R>(n * kS, 23), b = random_vector<R>(n * kS, 24);
  const auto d_a = DeviceBuffer<R>::from_host(a), d_b = DeviceBuffer<R>::from_host(b);
  for (const bool with_b : {false, true}) {
    DeviceBuffer<double> d_out(kS);
    gpu::sample_abs_distance(d_a.get(), with_b ? d_b.get() : nullptr, n, kS, d_out.get());
    std::vector<double> out(kS);
    gpu::cpu::sample_abs_distance(a.data(), with_b ? b.data() : nullptr, n, kS, out.data());
    require_close(d_out.to_host(), out, 1e-9, 1e-12);
  }
}

// sqrt and division in double are correctly rounded on both sides: exact; G = 0 gives 0.
TEST_CASE("random_update_scales matches its CPU twin", "[kernel][update]") {
  const std::vector<double> w_sq = {4.0, 1e-30, 7.5, 3.0}, g_sq = {16.0, 2.0, 0.0, 1e40};
  const int S = int(w_sq.size());
  const auto d_w = DeviceBuffer<double>::from_host(w_sq), d_g = DeviceBuffer<double>::from_host(g_sq);
  DeviceBuffer<double> d_f(S);
  gpu::random_update_scales(d_w.get(), d_g.get(), 1e-3, d_f.get(), S);
  std::vector<double> f(S);
  gpu::cpu::random_update_scales(w_sq.data(), g_sq.data(), 1e-3, f.data(), S);
  CHECK(f[0] == 1e-3 * 0.5);
  CHECK(f[2] == 0.0);
  require_close(d_f.to_host(), f, 0.0, 0.0);
}
