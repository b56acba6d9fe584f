// Every GPU op (gpu/ops.hpp, gpu/stat_ops.hpp) against its reference, float and double, at sizes that are
// not multiples of any block size (32, 128, 256, 1024). One row per op, or per forward/backward pair: the
// arguments, and the mixed tolerance |gpu - cpu| <= tol + |cpu| * eps with the reason it suffices
// (tests/gpu/op_check.hpp runs both sides). The cases below the table check what a plain comparison cannot
// (bits, aliasing, properties of the reference). On a device in test_gpu; on the mock (test_gpu_mock), where
// each launcher is its reference, the same rows check the table itself.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "gpu/ops.hpp"
#include "gpu/stat_ops.hpp"
#include "op_check.hpp"

using normsim::gpu::DeviceBuffer;
using normsim::test::check_op;
using normsim::test::in;
using normsim::test::in_or_null;
using normsim::test::out;
using normsim::test::random_vector;
using normsim::test::require_close;
namespace gpu = normsim::gpu;
namespace sim = normsim::sim;

namespace {

template <class R>
constexpr double ulp() {
  return std::numeric_limits<R>::epsilon();
}

const std::vector<std::uint32_t> kSamples = {0, 5, 2};  // not contiguous, not sorted
constexpr int kS = 3, kT = 7, kD = 37;
constexpr std::size_t kN = 100003;  // elementwise size: prime, over several blocks and a partial one

struct OpRow {
  const char* op;
  std::function<void()> check;
};

// Draws from the sample's Philox streams: the same code on both sides, with CUDA's logf/sinf/cosf (<= 2 ulp,
// CUDA programming guide's accuracy table) against glibc's (<= 1 ulp): |z| <= 5.8, so 8 float ulps relative
// plus 2e-6 absolute (values near a zero of cos, times input_std 1.5) cover it. One-hot ids come from the
// same Philox bits on both sides: exact. Batch 0 (a run without steps) and a later batch.
template <class R>
std::vector<OpRow> draw_rows() {
  const std::size_t n = std::size_t(kS) * kT * kD;
  const int vocab = 1031;  // no multiple of the block size
  return {
      {"input_fill",
       [=] {
         for (const std::uint32_t batch : {0u, 3u})
           check_op(2e-6, 8 * ulp<float>(), NORMSIM_OP(input_fill), out<R>(n), kS, in(kSamples), kT, kD,
                    std::uint64_t(7), 1.5, 0.3, batch);
       }},
      {"loss_gradient",
       [=] {
         const auto y = random_vector<R>(n, 1);
         for (const std::uint32_t batch : {0u, 3u})
           for (const bool mse : {false, true})
             check_op(2e-6, 8 * ulp<float>(), NORMSIM_OP(loss_gradient), in(y), out<R>(n), kS, in(kSamples),
                      kT, kD, std::uint64_t(7), mse, batch);
       }},
      {"token_onehot_fill",
       [=] {
         for (const std::uint32_t batch : {0u, 3u})
           check_op(0.0, 0.0, NORMSIM_OP(token_onehot_fill), out<R>(std::size_t(kS) * kT * vocab), kS,
                    in(kSamples), kT, vocab, std::uint64_t(7), batch);
       }},
  };
}

// Entry by entry. Device erf/exp/tanh are within 2 ulps of correctly rounded (CUDA accuracy table), glibc's
// within 1; a derivative multiplies two such values: 8 ulps. DyT and Derf compute in double from R and round
// once: 2 ulps of R, 4 for the backward's product and its accumulate. One multiply and one add may be fused
// by nvcc (one rounding instead of two): 2 ulps (scaled_sum, gradient_step's w - g lr).
template <class R>
std::vector<OpRow> elementwise_rows() {
  const auto h = random_vector<R>(kN, 3, 2.0), g = random_vector<R>(kN, 4, 2.0), da = random_vector<R>(kN, 5);
  const double u = ulp<R>();
  return {
      {"activation_forward, activation_backward",
       [=] {
         for (const auto act : {sim::Activation::relu, sim::Activation::gelu, sim::Activation::silu,
                                sim::Activation::tanh, sim::Activation::linear}) {
           check_op(8 * u, 8 * u, NORMSIM_OP(activation_forward), in(h), out<R>(kN), kN, act);
           check_op(8 * u, 8 * u, NORMSIM_OP(activation_backward), in(h), in(da), out<R>(kN), kN, act);
         }
       }},
      {"swiglu_forward, swiglu_backward",
       [=] {
         check_op(8 * u, 8 * u, NORMSIM_OP(swiglu_forward), in(g), in(h), out<R>(kN), kN);
         check_op(8 * u, 8 * u, NORMSIM_OP(swiglu_backward), in(g), in(h), in(da), out<R>(kN), out<R>(kN),
                  kN);
       }},
      {"pointwise_norm_forward, pointwise_norm_backward",
       [=] {
         const auto x = random_vector<R>(kN, 6, 3.0), dy = random_vector<R>(kN, 7);
         for (const sim::PointwiseNorm f : {sim::PointwiseNorm{normsim::vocab::Norm::dyt, 1.3, 0.5, 0.0},
                                            sim::PointwiseNorm{normsim::vocab::Norm::derf, 0.8, 0.7, -0.3}}) {
           check_op(2 * u, 2 * u, NORMSIM_OP(pointwise_norm_forward), in(x), out<R>(kN), kN, f);
           for (const bool acc : {false, true})  // accumulating onto x
             check_op(4 * u, 4 * u, NORMSIM_OP(pointwise_norm_backward), in(x), in(dy), out(x), kN, f, acc);
         }
       }},
      {"scaled_sum",
       [=] {
         const std::size_t n = kN / kS;
         const auto a = random_vector<R>(n * kS, 6), b = random_vector<R>(n * kS, 7);
         const auto o = random_vector<R>(n * kS, 8);
         const std::vector<double> s = {0.5, -1.25, 3.0};
         for (const bool acc : {false, true})
           for (const bool use_s : {false, true})
             for (const bool use_b : {false, true})
               check_op(2 * u, 2 * u, NORMSIM_OP(scaled_sum), out(o), in(a), in_or_null(use_s, s),
                        in_or_null(use_b, b), n, kS, acc);
       }},
      {"swap_middle_axes",  // a permutation: exact
       [=] {
         const int S = 3, A = 37, B = 5, n = 9;
         const auto x = random_vector<R>(std::size_t(S) * A * B * n, 13);
         check_op(0.0, 0.0, NORMSIM_OP(swap_middle_axes), in(x), out<R>(x.size()), S, A, B, n);
       }},
  };
}

// Row reductions run in double on both sides, in different orders (a block's tree against a serial loop):
// the sums agree to ~n 1e-16 and the outputs round to R, so 4 ulps of R relative (and absolute, near 0);
// the norm's backward 8. The attention gate: in double from R inputs, rounded once per output; the twins
// differ by the device's exp (<= 2 ulps of double) and, for dz, the order nvcc contracts the group's sum (a
// sum of <= 37 products in double: far below R's rounding): 2 ulps, and 4 on near-zero dz. nGPT's unit
// norms: each vector's squares summed in double in the same order on both sides, then one correctly rounded
// scale per vector: 1 ulp, 2 allowing a fused multiply in the square sum.
template <class R>
std::vector<OpRow> row_rows() {
  const double u = ulp<R>();
  return {
      {"row_norm_forward, row_norm_backward",
       [=] {
         for (const int n : {37, 300, 1029})  // the 32-, 128- and 256-thread launch paths
           for (const auto kind : {sim::NormKind::layernorm, sim::NormKind::rmsnorm}) {
             const int rows = 13;
             const auto x = random_vector<R>(std::size_t(rows) * n, 1, 2.0);
             const auto dy = random_vector<R>(std::size_t(rows) * n, 2);
             check_op(4 * u, 4 * u, NORMSIM_OP(row_norm_forward), in(x), out<R>(x.size()), out<double>(rows),
                      rows, n, kind, 1.3, 1e-5);
             std::vector<R> y(x.size());
             std::vector<double> rstd(rows);
             gpu::cpu::row_norm_forward(x.data(), y.data(), rstd.data(), rows, n, kind, 1.3, 1e-5);
             for (const bool acc : {false, true})  // accumulating onto x
               check_op(8 * u, 8 * u, NORMSIM_OP(row_norm_backward), in(y), in(dy), out(x), in(rstd), rows, n,
                        kind, 1.3, acc);
           }
       }},
      {"attention_gate_forward, attention_gate_backward",
       [=] {  // elementwise (group 1) and headwise (group 37 of d = 37 * 3, and 5 of 35)
         for (const auto& [d, group] : {std::pair{kD, 1}, std::pair{3 * kD, kD}, std::pair{35, 5}}) {
           const int rows = kS * kT, G = d / group;
           const auto o = random_vector<R>(std::size_t(rows) * d, 6),
                      dy = random_vector<R>(std::size_t(rows) * d, 7),
                      z = random_vector<R>(std::size_t(rows) * G, 8, 2.0);
           check_op(2 * u, 2 * u, NORMSIM_OP(attention_gate_forward), in(o), in(z), out<R>(o.size()), rows, d,
                    group);
           check_op(4 * u, 4 * u, NORMSIM_OP(attention_gate_backward), in(o), in(z), in(dy), out<R>(o.size()),
                    out<R>(z.size()), rows, d, group);
         }
       }},
      {"unit_norm_vectors",
       [=] {  // S matrices of 37 x 45, by columns and by rows
         const int rows = 37, cols = 45;
         const auto w = random_vector<R>(std::size_t(kS) * rows * cols, 9);
         for (const bool columns : {true, false})
           check_op(2 * u, 2 * u, NORMSIM_OP(unit_norm_vectors), out(w), kS, rows, cols,
                    sim::UnitNorm{columns, 1.7});
       }},
  };
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

template <class R>
std::vector<OpRow> softmax_rows() {
  return {{"softmax_forward, softmax_backward", [] {
             for (const int T : {7, 33, 130, 513})
               for (const bool causal : {false, true}) {
                 const int rows = 2 * T + 3;  // several heads' worth of rows, the last one partial
                 auto p = random_vector<R>(std::size_t(rows) * T, 9, 3.0);
                 check_op(softmax_eps<R>(T), softmax_eps<R>(T), NORMSIM_OP(softmax_forward), out(p), rows, T,
                          causal);
                 gpu::cpu::softmax_forward(p.data(), rows, T, causal);
                 // dot = sum_s dp_s p_s is a T-term sum in another order: its error, T 2^-53 of
                 // sum |dp_s p_s| <= max |dp| (~4 for these Gaussians), reaches dp_s - dot absolutely.
                 const double t = 8 * ulp<R>() + softmax_eps<R>(T) + 4 * T * std::ldexp(1.0, -53);
                 check_op(t, t, NORMSIM_OP(softmax_backward), in(p), out(random_vector<R>(p.size(), 10)),
                          rows, T, 0.125);
               }
           }}};
}

// The routed MLP's kernels: 37 rows of E = 7 logits (k = 3) and n = 45 entries. The gates are computed in
// double in both (sim/moe_gate.hpp); the device's exp may differ from the host's by an ulp of double, far
// below the float result's rounding: tolerance 1e-6 + 1e-5 relative in float, 1e-12 + 1e-10 in double.
template <class R>
std::vector<OpRow> moe_rows() {
  constexpr int kRows = 37, kE = 7, kTopK = 3, kWidth = 45;
  const double tol = std::is_same_v<R, float> ? 1e-6 : 1e-12, eps = std::is_same_v<R, float> ? 1e-5 : 1e-10;
  const auto z = random_vector<R>(std::size_t(kRows) * kE, 31),
             dg = random_vector<R>(std::size_t(kRows) * kE, 32);
  const auto y = random_vector<R>(std::size_t(kRows) * kWidth, 33),
             dout = random_vector<R>(std::size_t(kRows) * kWidth, 34);
  return {
      {"moe_gates, moe_gates_backward",
       [=] {
         for (const bool renormalized : {true, false}) {
           check_op(tol, eps, NORMSIM_OP(moe_gates), in(z), out<R>(z.size()), kRows, kE, kTopK, renormalized);
           check_op(tol, eps, NORMSIM_OP(moe_gates_backward), in(z), in(dg), out<R>(z.size()), kRows, kE,
                    kTopK, renormalized);
         }
       }},
      {"moe_gate_rows, moe_gate_gradient",
       [=] {
         for (const bool accumulate : {false, true})
           check_op(tol, eps, NORMSIM_OP(moe_gate_rows), out(dout), in(dg), in(y), kRows, kWidth, kE, 4,
                    accumulate);
         check_op(tol, eps, NORMSIM_OP(moe_gate_gradient), in(dout), in(y), out(dg), kRows, kWidth, kE, 2);
       }},
  };
}

// Per-sample sums in double of n terms in different orders: relative error <= n 2^-53 of sum |term|, which
// for these Gaussian inputs is ~ n; 1e-9 absolute is far above that and far below any real disagreement.
// The parameter updates: Adam's m and v move in double and round once to R on both sides (the device may
// fuse a product and a sum: 2 ulps of R); the displacement's quotient is double's sqrt and division,
// correctly rounded on both sides, and D - step * mult may fuse likewise: 2 ulps of R relative, plus 2 ulps
// of the largest step where D is near 0.
template <class R>
std::vector<OpRow> sample_and_update_rows() {
  const std::size_t n = kN / kS;
  const auto a = random_vector<R>(n * kS, 11), b = random_vector<R>(n * kS, 12);
  const double u = ulp<R>();
  return {
      {"sample_dot",
       [=] { check_op(1e-9, 1e-12, NORMSIM_OP(sample_dot), in(a), in(b), n, kS, out<double>(kS)); }},
      {"sum_slices",  // the same additions in double in the same order, one rounding: exact
       [=] {
         const int slices = 3, items = 2, m = 5, n = 7, ldc = 9;
         const long long stride_c = 50;
         const auto parts = random_vector<R>(std::size_t(slices) * items * m * n, 23);
         const auto c = random_vector<R>(std::size_t(stride_c) * items, 24);
         for (const bool acc : {false, true})
           check_op(0.0, 0.0, NORMSIM_OP(sum_slices), out(c), in(parts), slices, items, m, n, ldc, stride_c,
                    acc);
       }},
      {"sample_distance_sq",
       [=] { check_op(1e-9, 1e-12, NORMSIM_OP(sample_distance_sq), in(a), in(b), n, kS, out<double>(kS)); }},
      {"sample_abs_distance",
       [=] {
         for (const bool with_b : {false, true})
           check_op(1e-9, 1e-12, NORMSIM_OP(sample_abs_distance), in(a), in_or_null(with_b, b), n, kS,
                    out<double>(kS));
       }},
      {"gradient_step",
       [=] {
         const auto w = random_vector<R>(kN, 17), g = random_vector<R>(kN, 18, 3.0);
         for (const bool adam : {false, true})
           check_op(2 * u, 2 * u, NORMSIM_OP(gradient_step), out(w), in(g), kN, 0.01, adam, 1e-8);
       }},
      {"adam_accumulate, adam_displace",
       [=] {
         const auto g = random_vector<R>(kN, 19, 3.0), m = random_vector<R>(kN, 20, 0.1);
         auto v = random_vector<R>(kN, 21, 0.1);
         for (R& x : v) x = x * x;
         const sim::AdamStep moments{0.01, 1e-8, 0.9, 0.999, 1, 1}, step{0.01, 1e-8, 0.9, 0.999, 0.19, 0.002};
         check_op(2 * u, 2 * u, NORMSIM_OP(adam_accumulate), in(g), out(m), out(v), kN, 1.5, moments);
         std::vector<R> m1 = m, v1 = v;
         gpu::cpu::adam_accumulate(g.data(), m1.data(), v1.data(), kN, 1.5, moments);
         const auto d0 = random_vector<R>(kN, 22, 0.01);
         std::vector<R> d = d0;
         gpu::cpu::adam_displace(d.data(), m1.data(), v1.data(), kN, 1.5, step);
         double largest_step = 0;
         for (std::size_t i = 0; i < kN; ++i)
           largest_step = std::max(largest_step, std::abs(double(d[i] - d0[i])));
         check_op(2 * u * largest_step, 2 * u, NORMSIM_OP(adam_displace), out(d0), in(m1), in(v1), kN, 1.5,
                  step);
       }},
  };
}

// The statistics of streams of S x T x d = 3 x 13 x 1037: all sums in double on both sides, differing only
// in order: n terms give relative differences of a few n 1.1e-16; the largest sum here has 1037 terms, so
// eps 1e-12 (tol 1e-13 where a difference of near-equal sums is taken, token_cos) is ~10x above what the
// order can do. One product by a power of two (or, in the last sample, by 3: a rounded product) in R and a
// widening are correctly rounded on both sides: exact. The eigensolver goes through the backend tests.
constexpr int kStatS = 3, kStatT = 13, kStatD = 1037;

template <class R>
std::vector<OpRow> stat_rows() {
  std::vector<R> x = random_vector<R>(std::size_t(kStatS) * kStatT * kStatD, 1);
  const auto next = random_vector<R>(x.size(), 2);
  for (int c = 0; c < kStatD; ++c) x[std::size_t(kStatT + 4) * kStatD + c] = 0;   // sample 1: a zero token
  x[std::size_t(2 * kStatT) * kStatD + 7] = std::numeric_limits<R>::quiet_NaN();  // sample 2: a NaN
  const int rows = kStatS * kStatT;
  std::vector<double> stats(std::size_t(rows) * gpu::kRowStats), colsq(std::size_t(kStatS) * kStatD);
  gpu::cpu::row_stats(x.data(), next.data(), rows, kStatD, stats.data());
  gpu::cpu::unit_column_square(x.data(), stats.data(), kStatS, kStatT, kStatD, colsq.data());
  return {
      {"row_stats",
       [=] {
         for (const bool pair : {true, false})
           check_op(0.0, 1e-12, NORMSIM_OP(row_stats), in(x), in_or_null(pair, next), rows, kStatD,
                    out<double>(stats.size()));
       }},
      {"unit_column_square",
       [=] {
         check_op(0.0, 1e-12, NORMSIM_OP(unit_column_square), in(x), in(stats), kStatS, kStatT, kStatD,
                  out<double>(colsq.size()));
       }},
      {"stream_stats_finish",
       [=] {
         for (const bool columns : {true, false})
           check_op(1e-13, 1e-12, NORMSIM_OP(stream_stats_finish), in(stats), in_or_null(columns, colsq),
                    kStatS, kStatT, kStatD, out<double>(std::size_t(gpu::kStreamFields) * kStatS));
       }},
      {"widen, scaled_widen",
       [=] {
         check_op(0.0, 0.0, NORMSIM_OP(widen), in(x), x.size(), out<double>(x.size()));
         check_op(0.0, 0.0, NORMSIM_OP(scaled_widen), in(x), in(std::vector<double>{0.25, 1024.0, 3.0}),
                  x.size() / kStatS, kStatS, out<double>(x.size()));
       }},
  };
}

// R-independent ops over doubles: the effective rank (two passes of n = 301 terms in double, as above: 1e-12)
// of a few slightly negative eigenvalues, clamped to 0 by both, and a failed solve (info 1); the Frobenius
// norm's finish (frexp, ldexp and sqrt are exact or correctly rounded: exact).
std::vector<OpRow> double_rows() {
  return {
      {"spectral_effective_rank",
       [] {
         constexpr int n = 301;
         std::mt19937 gen(4);
         std::exponential_distribution<double> e(1.0);
         std::vector<double> w(std::size_t(kStatS) * n);
         for (auto& v : w) v = e(gen) - 0.01;
         check_op(0.0, 1e-12, NORMSIM_OP(spectral_effective_rank), in(w), in(std::vector<int>{0, 1, 0}), n,
                  kStatS, out<double>(kStatS));
       }},
      {"frobenius_finish",
       [] {
         const std::vector<double> ma = {768, 0, std::numeric_limits<double>::quiet_NaN(), 3},
                                   mb = {4, 2, 1, 5}, sum = {9, 4, 1, -1e-30};
         check_op(0.0, 0.0, NORMSIM_OP(frobenius_finish), in(ma), in(mb), in(sum), 4, out<double>(4));
       }},
  };
}

// The table: a new op adds its row to one of the lists above.
template <class R>
std::vector<OpRow> op_rows() {
  std::vector<OpRow> rows;
  for (auto&& list : {draw_rows<R>(), elementwise_rows<R>(), row_rows<R>(), softmax_rows<R>(), moe_rows<R>(),
                      sample_and_update_rows<R>(), stat_rows<R>()})
    rows.insert(rows.end(), list.begin(), list.end());
  if (std::is_same_v<R, double>) {
    const auto more = double_rows();
    rows.insert(rows.end(), more.begin(), more.end());
  }
  return rows;
}

}  // namespace

TEMPLATE_TEST_CASE("every op matches its reference", "[kernel]", float, double) {
  for (const OpRow& row : op_rows<TestType>()) {
    DYNAMIC_SECTION(row.op) {
      row.check();
    }
  }
}

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

// Pointers computed, not read through (the bases point into a host vector of the right size): equal on both
// sides. Negative steps are not used by gemm; large strides are, as item strides of wide layers.
TEMPLATE_TEST_CASE("slice_pointers matches its reference exactly", "[kernel][gemm]", float, double) {
  using R = TestType;
  const int items = 3, slices = 5, N = items * slices;
  const std::vector<R> space(100000);
  const R* base = space.data();
  DeviceBuffer<const R*> d_ptr(3 * std::size_t(N));
  gpu::slice_pointers(d_ptr.get(), base, 20000, 17, base + 3, 9000, 1500, base + 7, 300, items, slices);
  std::vector<const R*> want(3 * std::size_t(N));
  gpu::cpu::slice_pointers(want.data(), base, 20000, 17, base + 3, 9000, 1500, base + 7, 300, items, slices);
  CHECK(d_ptr.to_host() == want);
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
