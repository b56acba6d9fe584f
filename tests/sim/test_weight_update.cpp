// The parameter update of the metric output_change (sim/cpu/weight_update.hpp, sim/cpu/update_pass.hpp): each
// update rule against its definition, the updated pass against the first-order prediction of SGD,
// thread-count independence, and that an update leaves every first-pass metric bit for bit as it was.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/cpu/cpu_tape_device.hpp"
#include "sim/cpu/update_pass.hpp"
#include "sim/init.hpp"
#include "sim/inputs.hpp"
#include "sim/metrics.hpp"
#include "sim/placement.hpp"
#include "sim/sample_metrics.hpp"
#include "sim/stack_build.hpp"
#include "test_util.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;
using normsim::vocab::Update;
using normsim::vocab::operator<<;

namespace {

using normsim::test::same_bits;

Config small_config(normsim::vocab::Placement p, Update u) {
  Config c;
  c.placement = p;
  c.activation = normsim::vocab::Activation::gelu;  // smooth: a finite difference sees no kink
  c.width = 16;
  c.tokens = 4;
  c.depth = 4;
  c.mlp_ratio = 2.0;
  c.precision = normsim::vocab::Precision::float64;
  c.update = u;
  return c;
}

Mat<double> ramp(int rows, int cols, double step) {
  Mat<double> m(rows, cols);
  for (int i = 0; i < m.size(); ++i) m.data()[i] = step * (i - m.size() / 2.0);
  return m;
}

// ||dLoss/db||^2 summed over every bias the update recorded (0 without biases): an SGD step from b = 0 is
// -lr dLoss/db.
double bias_grad_sq(const WeightUpdate<double>& up, const StackShape& shape, double lr) {
  double sq = 0;
  for (int k = 0; k < shape.depth; ++k)
    for (const WeightKind w : shape.weights(k)) {
      if (!has_bias(shape.cfg, w)) continue;
      Mat<double> b = Mat<double>::Zero(1, shape.fan_out(w));
      up.apply(k, w, b, Part::bias);
      sq += b.squaredNorm() / (lr * lr);
    }
  return sq;
}

// First order: the readout loss changes by <g_r, x'_K - x_K> = -lr sum_W ||dLoss/dW||^2 + O(lr^2) under an
// SGD step (no final norm, so y = x_K), the sum over every weight matrix and every bias. Comparing at two
// learning rates bounds the O(lr^2) term.
void check_sgd_first_order(Config c) {
  c.final_norm = normsim::vocab::FinalNorm::never;
  const SampleTensors first = simulate_sample_cpu<double>(c, 0);
  double weight_grad_sq = 0;
  for (const auto& norms : first.gradw)
    for (const double n : norms)
      if (std::isfinite(n)) weight_grad_sq += n * n;
  const StackShape shape(c);
  const auto placement = placement_for(c);
  for (const double lr : {1e-5, 1e-6}) {
    c.update_lr = lr;
    const SampleKey key{c.seed, 0};
    WeightUpdate<double> up(c, key.seed, key.sample);
    // The first pass again, recording the gradients this time (as simulate_sample_cpu does).
    const SampleTensors recorded = simulate_sample_cpu<double>(c, 0);
    REQUIRE(recorded.output_change.size() == std::size_t(c.depth + 1));
    CHECK(recorded.output_change[0] == 0.0);  // the input does not depend on the weights
    // <g_r, dx_K> from output_change alone is not available, so recompute the updated stream here.
    PlacementState state;
    {
      CpuTape<double> g(shape, *placement, key, nullptr, UpdateHooks<double>{&up, nullptr});
      const StackValues sv = build_stack(g, shape, *placement, g.input(input_matrix<double>(c, key)), &state);
      Mat<double> dy(c.tokens, c.width);
      for (int t = 0; t < c.tokens; ++t)
        for (int i = 0; i < c.width; ++i) dy(t, i) = readout_entry(c.seed, 0, t, i, c.width);
      g.backward(sv.output, dy);
    }
    CpuWorkspace<double> ws;
    const std::vector<MatD> updated = updated_stream_cpu<double>(shape, *placement, key, up, state, ws);
    const std::vector<double> change = relative_change(updated, first.stream);
    for (int l = 0; l <= c.depth; ++l) CHECK(same_bits(change[l], recorded.output_change[l]));
    const MatD dx = updated.back() - first.stream.back();
    double inner = 0;
    for (int t = 0; t < c.tokens; ++t)
      for (int i = 0; i < c.width; ++i) inner += readout_entry(c.seed, 0, t, i, c.width) * dx(t, i);
    const double bias_sq = bias_grad_sq(up, shape, lr);
    CHECK((bias_sq > 0) == c.bias);
    // Relative error O(lr |H| / |grad|): at lr = 1e-5 a few 1e-4 here; 1e-3 bounds it with margin.
    INFO("placement " << c.placement << ", " << c.sublayer << ", bias " << c.bias << ", lr " << lr
                      << ", bias share " << bias_sq / (weight_grad_sq + bias_sq));
    CHECK(inner / (-lr * (weight_grad_sq + bias_sq)) == Approx(1.0).epsilon(1e-3));
  }
}

}  // namespace

TEST_CASE("each update rule is its definition", "[update]") {
  Config c;
  c.depth = 2;
  c.update_lr = 0.01;
  c.update_scale = 0.3;
  const Mat<double> W = ramp(5, 3, 0.1), g = ramp(5, 3, 2e-9);  // g has entries near Adam's eps
  for (const Update u : {Update::sgd, Update::adam}) {
    c.update = u;
    WeightUpdate<double> up(c, 7, 1);
    up.set_gradient(1, WeightKind::w1, g);
    Mat<double> w = W;
    up.apply(1, WeightKind::w1, w);
    for (int i = 0; i < W.size(); ++i) {
      const double gi = g.data()[i];
      const double want = u == Update::sgd ? -0.01 * gi : -0.01 * gi / (std::abs(gi) + c.adam_eps);
      CHECK(w.data()[i] - W.data()[i] == Approx(want).margin(1e-15));
    }
    Mat<double> other = W;  // a matrix whose gradient was never recorded is an error, not a silent no-op
    CHECK_THROWS(up.apply(0, WeightKind::w2, other));
  }
  c.update = Update::random;
  WeightUpdate<double> up(c, 7, 1);
  Mat<double> w = W, again = W;
  up.apply(1, WeightKind::w1, w);
  up.apply(1, WeightKind::w1, again);
  CHECK((w - W).norm() == Approx(0.3 * W.norm()).epsilon(1e-12));
  CHECK(w == again);  // its own Philox counters: the same direction every time
  Mat<double> w2 = W;
  up.apply(1, WeightKind::w2, w2);
  CHECK((w2 - W).cwiseAbs().maxCoeff() > 0);
  CHECK(((w2 - W) - (w - W)).norm() > 0.1 * (w - W).norm());  // another matrix, another direction
}

// A bias (1 x fan_out) moves by its matrix's rule from its own gradient and its own random stream; a zero
// bias stays zero under the random step, which is relative to the parameter's norm.
TEST_CASE("a bias moves by its matrix's rule, from its own gradient and stream", "[update][bias]") {
  Config c;
  c.depth = 2;
  c.update_lr = 0.01;
  c.update_scale = 0.3;
  c.update = Update::sgd;
  const Mat<double> b = ramp(1, 5, 0.1), g = ramp(1, 5, 1e-3);
  WeightUpdate<double> sgd(c, 7, 1);
  sgd.set_gradient(1, WeightKind::w1, g, Part::bias);
  Mat<double> stepped = b;
  sgd.apply(1, WeightKind::w1, stepped, Part::bias);
  CHECK((stepped - b + 0.01 * g).norm() < 1e-15);
  Mat<double> matrix = b;  // the matrix's gradient was never recorded: an error, not the bias's
  CHECK_THROWS(sgd.apply(1, WeightKind::w1, matrix));
  c.update = Update::random;
  WeightUpdate<double> random(c, 7, 1);
  Mat<double> bias_moved = b, row_moved = b, zero = Mat<double>::Zero(1, 5);
  random.apply(1, WeightKind::w1, bias_moved, Part::bias);
  random.apply(1, WeightKind::w1, row_moved);  // a one-row matrix of the same shape: the weight's stream
  CHECK((bias_moved - b).norm() == Approx(0.3 * b.norm()).epsilon(1e-12));
  CHECK(((bias_moved - b) - (row_moved - b)).norm() > 0.1 * (bias_moved - b).norm());
  random.apply(1, WeightKind::w1, zero, Part::bias);
  CHECK(zero.norm() == 0.0);
}

TEST_CASE("an SGD step changes the loss by -lr |grad|^2 to first order", "[update]") {
  for (const auto p :
       {normsim::vocab::Placement::pre, normsim::vocab::Placement::post, normsim::vocab::Placement::admin}) {
    Config c = small_config(p, Update::sgd);
    c.sublayer = normsim::vocab::Sublayer::transformer;
    check_sgd_first_order(c);
  }
}

// With biases (bias = true, drawn at init_bias 0.3) the step moves them too: the first-order change needs
// their gradients 1^T B, in every branch kind (the transformer's with an attention output gate).
TEST_CASE("an SGD step on weights and biases changes the loss by -lr |grad|^2 to first order",
          "[update][bias]") {
  for (const auto sub : {normsim::vocab::Sublayer::mlp, normsim::vocab::Sublayer::transformer,
                         normsim::vocab::Sublayer::decoder})
    for (const auto p : {normsim::vocab::Placement::pre, normsim::vocab::Placement::post}) {
      Config c = small_config(p, Update::sgd);
      c.sublayer = sub;
      if (sub == normsim::vocab::Sublayer::decoder) c.depth = 6;
      if (sub == normsim::vocab::Sublayer::transformer)
        c.attention_gate = normsim::vocab::AttentionGate::headwise;
      c.bias = true;
      c.init_bias = 0.3;
      check_sgd_first_order(c);
    }
}

// An update adds one metric and changes nothing else: every other value is the update = "none" run's, bit for
// bit, and update = "none" measures no output_change at all.
TEST_CASE("an update leaves the first pass's metrics unchanged", "[update]") {
  for (const Update u : {Update::random, Update::sgd, Update::adam}) {
    Config none = small_config(normsim::vocab::Placement::admin, Update::none);
    none.sublayer = normsim::vocab::Sublayer::transformer;
    none.precision = normsim::vocab::Precision::float32;
    Config with = none;
    with.update = u;
    const std::vector<int> samples{0, 1};
    const auto a = CpuBackend(1).run(none, samples), b = CpuBackend(1).run(with, samples);
    for (std::size_t s = 0; s < a.size(); ++s)
      for (int m = 0; m < metric::count; ++m)
        for (std::size_t l = 0; l < a[s].values[m].size(); ++l) {
          if (m == metric::output_change) {
            CHECK(std::isnan(a[s].values[m][l]));
            CHECK((l == 0 ? b[s].values[m][l] == 0.0 : b[s].values[m][l] > 0.0));
          } else {
            CHECK(same_bits(a[s].values[m][l], b[s].values[m][l]));
          }
        }
  }
}

TEST_CASE("output_change is identical for 1 and 2 threads", "[update][threads]") {
  for (const Update u : {Update::random, Update::adam}) {
    Config c = small_config(normsim::vocab::Placement::post, u);
    c.sublayer = normsim::vocab::Sublayer::transformer;
    c.precision = normsim::vocab::Precision::float32;
    const std::vector<int> samples{0, 1, 2};
    const auto one = CpuBackend(1).run(c, samples), two = CpuBackend(2).run(c, samples);
    for (std::size_t s = 0; s < one.size(); ++s)
      for (int l = 0; l <= c.depth; ++l)
        CHECK(same_bits(one[s].values[metric::output_change][l], two[s].values[metric::output_change][l]));
  }
}
