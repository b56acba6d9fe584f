// nGPT's unit-norm weights (init rule "unit", sim/unit_norm.hpp, sim/init.cpp): which vectors are normalized
// (NVIDIA/ngpt train.py L394-408: along n_embd, an input matrix's columns and an output matrix's rows in
// normsim's fan_in x fan_out layout), their length, the CPU branch drawing them, and the second-moment
// identity the mean field relies on (docs/theory_notes.md "Unit-norm weights").
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "sim/cpu/cpu_branches.hpp"
#include "sim/draws.hpp"
#include "sim/init.hpp"
#include "sim/unit_norm.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;

namespace {

template <class R>
Mat<R> gaussian_matrix(int rows, int cols, std::uint32_t sample, Stream stream) {
  Mat<R> m(rows, cols);
  fill_gaussian(m.data(), std::size_t(m.size()), DrawKey{11, sample, 0, stream}, 1.0);
  return m;
}

Config unit_mlp(normsim::vocab::Precision precision) {
  Config c;
  c.sublayer = normsim::vocab::Sublayer::mlp;
  c.placement = normsim::vocab::Placement::pre;
  c.activation = normsim::vocab::Activation::relu;
  c.width = 64;  // whole 64-column strips: the float32 drawn product would apply, were it not skipped
  c.mlp_ratio = 2;
  c.tokens = 5;
  c.depth = 2;
  c.seed = 9;
  c.precision = precision;
  c.init = normsim::vocab::Init::unit;
  c.init_gain = 1.3;
  c.init_w2 = "unit:0.7";  // a per-matrix override of the rule's gain
  return c;
}

// The MLP branch relu(u W1) W2 written out, W1's columns and W2's rows normalized by Eigen (not by
// sim/unit_norm.hpp) from the same Philox draws.
template <class R>
Mat<double> mlp_by_hand(const Config& c, const StackShape& s, const Placement& p, int k, const Mat<R>& u) {
  auto draw = [&](WeightKind w) {
    Mat<R> m(s.fan_in(w), s.fan_out(w));
    fill_gaussian(m.data(), std::size_t(m.size()), DrawKey{c.seed, 0, std::uint32_t(k), weight_stream(w)},
                  weight_std(s, p, 0, w));
    return Mat<double>(m.template cast<double>());
  };
  const Mat<double> w1 = draw(WeightKind::w1).colwise().normalized() * 1.3;
  const Mat<double> w2 = draw(WeightKind::w2).rowwise().normalized() * 0.7;
  return (u.template cast<double>() * w1).cwiseMax(0.0) * w2;
}

}  // namespace

// Lengths to rounding: the squares are summed in double, then each entry is rounded once to R, so a vector's
// length is off by at most ~sqrt(n) half-ulps relative: < 1e-6 in float (n <= 96), < 1e-14 in double.
TEMPLATE_TEST_CASE("unit-norm weights: every vector along the normalized axis has length gain",
                   "[init][unit]", float, double) {
  const double tol = std::is_same_v<TestType, float> ? 1e-6 : 1e-14;
  for (const bool columns : {true, false}) {
    Mat<TestType> w = gaussian_matrix<TestType>(96, 40, 0, Stream::w1);
    normalize_weight(w.data(), int(w.rows()), int(w.cols()), UnitNorm{columns, 2.5});
    const Eigen::VectorXd lengths = columns ? Eigen::VectorXd(w.template cast<double>().colwise().norm())
                                            : Eigen::VectorXd(w.template cast<double>().rowwise().norm());
    INFO("columns " << columns);
    REQUIRE(lengths.size() == (columns ? 40 : 96));
    for (Eigen::Index j = 0; j < lengths.size(); ++j) CHECK(std::abs(lengths(j) / 2.5 - 1) < tol);
  }
}

TEST_CASE("unit rule: input matrices normalize columns, output matrices rows, of length gain",
          "[init][unit]") {
  Config c = unit_mlp(normsim::vocab::Precision::float64);
  c.sublayer = normsim::vocab::Sublayer::transformer;
  c.init_w2.clear();
  const StackShape s(c);
  const Placement& p = find_placement(c.placement);
  for (WeightKind w : {WeightKind::w1, WeightKind::wq, WeightKind::wk, WeightKind::wv}) {
    const auto u = unit_norm(s, p, 0, w);
    REQUIRE(u);
    CHECK(u->columns);
    CHECK(u->length == Approx(1.3));
    CHECK(weight_std(s, p, 0, w) == Approx(1.3 / std::sqrt(double(s.fan_in(w)))));
  }
  for (WeightKind w : {WeightKind::w2, WeightKind::wo}) {
    const auto u = unit_norm(s, p, 0, w);
    REQUIRE(u);
    CHECK_FALSE(u->columns);
    CHECK(u->length == Approx(1.3));
    CHECK(weight_std(s, p, 0, w) == Approx(1.3 / std::sqrt(double(s.fan_out(w)))));
  }
  c.scaled_output = true;  // scales the output matrices' length as it scales any rule's std
  CHECK(unit_norm(StackShape(c), p, 0, WeightKind::wo)->length == Approx(1.3 / std::sqrt(double(c.depth))));
  c.init = normsim::vocab::Init::fanin;
  CHECK_FALSE(unit_norm(StackShape(c), p, 0, WeightKind::w1));
  c.init_wq = "unit:1";
  CHECK(unit_norm(StackShape(c), p, 0, WeightKind::wq));
}

TEMPLATE_TEST_CASE("the CPU MLP branch draws unit-norm W1 columns and W2 rows", "[init][unit]", float,
                   double) {
  const bool f32 = std::is_same_v<TestType, float>;
  const Config c = unit_mlp(f32 ? normsim::vocab::Precision::float32 : normsim::vocab::Precision::float64);
  const StackShape s(c);
  const Placement& p = find_placement(c.placement);
  const int k = 1;
  Mat<TestType> u(c.tokens, c.width);
  for (int i = 0; i < u.size(); ++i) u.data()[i] = TestType(std::sin(0.37 * i + 0.2));
  auto branch = make_cpu_branch<TestType>(s, p, k, SampleKey{c.seed, 0}, false);
  for (const bool keep : {false, true}) {
    CpuWorkspace<TestType> ws;
    ws.keep_weights = keep;
    ws.pass = 1;  // a pass number no kept slot holds yet (slots start at 0)
    const Mat<double> got = branch->forward(u, ws).template cast<double>();
    const Mat<double> want = mlp_by_hand<TestType>(c, s, p, k, u);
    INFO("keep_weights " << keep);
    // float32: products of 64 and 128 terms of O(1) rounded to float, ~1e-6 relative of the row's scale.
    CHECK((got - want).cwiseAbs().maxCoeff() <= (f32 ? 1e-4 : 1e-12) * want.cwiseAbs().maxCoeff());
  }
}

// For a fixed u and a unit-norm input matrix W (n x m, columns of length g): E|u W|^2 = g^2 |u|^2 m / n;
// for an output matrix (rows of length g): E|a W|^2 = g^2 |a|^2. 400 draws of W (keyed by sample) give
// the ratio's mean and its standard error measured from the draws; fixed seeds; within 4 se (two-sided,
// ~6e-5 false alarm). Exact in expectation at any n, so no finite-width allowance.
TEST_CASE("unit-norm weights have the second moments of Gaussian entries of variance g^2/n", "[init][unit]") {
  const int n = 24, m = 40, draws = 400;
  const double g = 1.7;
  Mat<double> x(1, n), a(1, n);
  for (int i = 0; i < n; ++i) x(0, i) = std::cos(0.9 * i) + 0.3, a(0, i) = std::sin(1.3 * i);
  for (const bool columns : {true, false}) {
    double sum = 0, sum_sq = 0;
    const Mat<double>& v = columns ? x : a;
    for (int r = 0; r < draws; ++r) {
      Mat<double> w = gaussian_matrix<double>(n, m, std::uint32_t(r), Stream::w2);
      normalize_weight(w.data(), n, m, UnitNorm{columns, g});
      const double ratio = (v * w).squaredNorm() / (g * g * v.squaredNorm());
      sum += ratio, sum_sq += ratio * ratio;
    }
    const double mean = sum / draws, se = std::sqrt((sum_sq / draws - mean * mean) / (draws - 1));
    const double expected = columns ? double(m) / n : 1.0;
    INFO("columns " << columns << ": mean " << mean << " +- " << se << ", expected " << expected);
    CHECK(std::abs(mean - expected) <= 4 * se);
    CHECK(se > 0);
  }
}
