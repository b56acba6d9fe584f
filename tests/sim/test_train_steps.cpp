// A few steps of training (steps > 0, sim/cpu/train_loop.hpp, docs/design/parametrization.md P4): one step
// equals the one update of steps = 0; three Adam steps of a 2-sublayer stack equal a plain Eigen loop written
// here; the records do not depend on the thread count; a resumed grid writes the files an uninterrupted one
// does; fixed and fresh batches share step 0 and part after it; the optimizer's memory is counted and
// refused; a grid that sets steps = 0 writes the files of a grid without the key; and the embedding and
// readout matrices are stepped by their own rules (muP's), against a plain Eigen loop of SGD and of Adam; and
// a parameter's gradient given twice in a pass, or missing in a step, is an error that names it.
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <tuple>
#include <vector>

#include "same_records.hpp"
#include "sim/cpu/cpu_backend.hpp"
#include "sim/cpu/optimizer.hpp"
#include "sim/draws.hpp"
#include "sim/edges.hpp"
#include "sim/init.hpp"
#include "sim/inputs.hpp"
#include "sim/metrics.hpp"
#include "sim/placement.hpp"
#include "sim/run/config_schema.hpp"
#include "sim/run/sweep.hpp"
#include "sim/unit_plan.hpp"
#include "test_util.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;
using normsim::test::read_text;
using normsim::test::same_records;
using normsim::test::ScratchDir;
using normsim::vocab::Update;

namespace {

Config small(Update u, int steps) {
  Config c;
  c.placement = normsim::vocab::Placement::pre;
  c.width = 16;
  c.tokens = 4;
  c.depth = 4;
  c.mlp_ratio = 2.0;
  c.samples = 2;
  c.update = u;
  c.update_lr = 0.01;
  c.steps = steps;
  return c;
}

std::vector<SampleRecord> run_cpu(const Config& c, int threads) {
  CpuBackend cpu(threads);
  const std::vector<int> samples{0, 1};
  return cpu.run(c, samples);
}

// The records of step `step`, one per sample.
std::vector<SampleRecord> at_step(const std::vector<SampleRecord>& all, int step) {
  std::vector<SampleRecord> out;
  for (const auto& r : all)
    if (r.step == step) out.push_back(r);
  return out;
}

using normsim::test::same_bits;

}  // namespace

TEST_CASE("steps1_equals_update: step 1 is the one update (sgd bit for bit, adam within 4 ulp per entry)") {
  for (const auto precision : {normsim::vocab::Precision::float32, normsim::vocab::Precision::float64}) {
    INFO(normsim::vocab::name(precision));
    Config one = small(Update::sgd, 0), stepped = small(Update::sgd, 1);
    one.precision = stepped.precision = precision;
    const auto a = run_cpu(one, 2), b = run_cpu(stepped, 2);
    REQUIRE(b.size() == 2 * a.size());
    // Step 0 is the first pass of the one update, every metric; output_change at step 1 is its second pass.
    const auto b0 = at_step(b, 0), b1 = at_step(b, 1);
    for (std::size_t s = 0; s < a.size(); ++s)
      for (int m = 0; m < metric::count; ++m) {
        if (m == metric::output_change) continue;
        for (std::size_t i = 0; i < a[s].values[m].size(); ++i)
          CHECK((same_bits(a[s].values[m][i], b0[s].values[m][i]) ||
                 (std::isnan(a[s].values[m][i]) && std::isnan(b0[s].values[m][i]))));
      }
    for (std::size_t s = 0; s < a.size(); ++s)
      for (std::size_t l = 0; l < a[s].values[metric::output_change].size(); ++l) {
        const double want = a[s].values[metric::output_change][l];
        CHECK(std::isfinite(want));
        CHECK(same_bits(want, b1[s].values[metric::output_change][l]));
      }
  }
  // Adam: m^ / (sqrt(v^) + eps) rounds m and v to the backend's precision, where g / (|g| + eps) does not;
  // per entry, from the same gradient, within 4 float ulp (relative 4 * 2^-23) of the one update's step.
  Config c = small(Update::adam, 1);
  const StackShape shape(c);
  Optimizer<float> adam(shape);
  WeightUpdate<float> one(c, c.seed, 0);
  Mat<float> g(5, 7);
  for (int i = 0; i < g.size(); ++i)
    g.data()[i] = float(std::ldexp(1.0 + 0.37 * i, (i % 9) - 4) * (i % 2 ? -1 : 1));
  adam.set_gradient(0, WeightKind::w1, g);
  one.set_gradient(0, WeightKind::w1, g);
  adam.step();
  Mat<float> w_adam = Mat<float>::Zero(5, 7), w_one = Mat<float>::Zero(5, 7);
  adam.apply(0, WeightKind::w1, w_adam);
  one.apply(0, WeightKind::w1, w_one);
  for (int i = 0; i < g.size(); ++i)
    CHECK(std::abs(w_adam.data()[i] - w_one.data()[i]) <= 4 * std::ldexp(std::abs(w_one.data()[i]), -23));
}

TEST_CASE(
    "optimizer_gradient_checks: a parameter with two gradients in a pass, or none in a step, is named") {
  for (const Update u : {Update::sgd, Update::adam}) {
    const StackShape shape(small(u, 2));
    Optimizer<double> optimizer(shape);
    const Mat<double> g = Mat<double>::Ones(3, 2);
    optimizer.set_gradient(0, WeightKind::w1, g);
    CHECK_THROWS_WITH(optimizer.set_gradient(0, WeightKind::w1, g),
                      "optimizer: a second gradient of w1 at sublayer 0 in step 1");
    optimizer.set_gradient(1, WeightKind::w2, g, Part::bias);
    optimizer.step();
    optimizer.set_gradient(0, WeightKind::w1, g);
    CHECK_THROWS_WITH(optimizer.step(), "optimizer: no gradient of w2's bias at sublayer 1 in step 2");
  }
}

namespace {

// The reference of adam_three_steps_reference: x_{k+1} = x_k + relu(x_k W1_k) W2_k for k = 0, 1 (placement
// "none", no final norm), loss sum g * x_2 with g the readout direction, Adam of Kingma & Ba 2015 Alg. 1 in
// plain Eigen on W (not the displacement). Returns mean(x_2^2) before each step and after the last.
std::vector<double> reference_act_sq(const Config& c, int steps) {
  using M = Eigen::MatrixXd;
  const StackShape shape(c);
  const auto placement = placement_for(c);
  const int T = c.tokens, d = c.width, H = int(std::lround(c.mlp_ratio * d)), K = c.depth;
  std::vector<M> W1(K), W2(K), m1(K), v1(K), m2(K), v2(K);
  for (int k = 0; k < K; ++k) {
    for (auto [W, w, rows, cols] :
         {std::tuple{&W1[k], WeightKind::w1, d, H}, {&W2[k], WeightKind::w2, H, d}}) {
      // The weights are the stack's data, drawn by the backend's fill (test_philox.cpp checks the draws).
      Mat<double> drawn;
      draw_matrix(drawn, rows, cols, DrawKey{c.seed, 0, std::uint32_t(k), weight_stream(WeightId{w})},
                  weight_std(shape, *placement, k, w), 1);
      *W = drawn;
    }
    m1[k] = v1[k] = M::Zero(d, H);
    m2[k] = v2[k] = M::Zero(H, d);
  }
  M x0(T, d), g(T, d);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < d; ++i) {
      x0(t, i) = input_entry(c.seed, 0, t, i, d, c.input_std, c.input_corr);
      g(t, i) = readout_entry(c.seed, 0, t, i, d);
    }
  std::vector<double> act_sq;
  for (int s = 0; s <= steps; ++s) {
    std::vector<M> x{x0}, h(K);
    for (int k = 0; k < K; ++k) {
      h[k] = x[k] * W1[k];
      x.push_back(x[k] + h[k].cwiseMax(0.0) * W2[k]);
    }
    act_sq.push_back(x[K].squaredNorm() / double(T * d));
    if (s == steps) break;
    const double c1 = 1 - std::pow(c.adam_beta1, s + 1), c2 = 1 - std::pow(c.adam_beta2, s + 1);
    const auto adam = [&](M& W, M& m, M& v, const M& grad) {
      m = c.adam_beta1 * m + (1 - c.adam_beta1) * grad;
      v = c.adam_beta2 * v + (1 - c.adam_beta2) * grad.cwiseProduct(grad);
      W -= (c.update_lr * (m / c1).array() / ((v / c2).array().sqrt() + c.adam_eps)).matrix();
    };
    M dx = g;
    for (int k = K - 1; k >= 0; --k) {
      const M a = h[k].cwiseMax(0.0);
      const M dW2 = a.transpose() * dx;
      const M dh = (dx * W2[k].transpose()).cwiseProduct((h[k].array() > 0).cast<double>().matrix());
      const M dW1 = x[k].transpose() * dh;
      dx = dx + dh * W1[k].transpose();
      adam(W2[k], m2[k], v2[k], dW2);
      adam(W1[k], m1[k], v1[k], dW1);
    }
  }
  return act_sq;
}

// The stack the Eigen references write out: 2 ReLU MLP sublayers without norms, 3 steps, float64.
Config reference_config(Update u) {
  Config c = small(u, 3);
  c.placement = normsim::vocab::Placement::none;
  c.final_norm = normsim::vocab::FinalNorm::never;
  c.activation = normsim::vocab::Activation::relu;
  c.depth = 2;
  c.samples = 1;
  c.precision = normsim::vocab::Precision::float64;
  return c;
}

}  // namespace

TEST_CASE("adam_three_steps_reference: a 2-sublayer stack against a plain Eigen loop of Adam") {
  const Config c = reference_config(Update::adam);
  CpuBackend cpu(1);
  const std::vector<int> sample0{0};
  const auto records = cpu.run(c, sample0);
  const std::vector<double> want = reference_act_sq(c, 3);
  REQUIRE(records.size() == 4);
  for (int s = 0; s <= 3; ++s) {
    INFO("step " << s);
    // float64 on both sides: they differ by rounding (W_0 + D here is W updated in place there), ~1e-15
    // relative; 1e-10 is far above it and far below a step's change of x_2 (several per cent at lr 0.01).
    CHECK(records[s].values[metric::act_sq][2] == Approx(want[s]).epsilon(1e-10));
  }
  CHECK(std::abs(want[3] / want[0] - 1) > 1e-3);  // the steps moved the output: the comparison sees them
}

namespace {

// One matrix of the reference below: W_eff as the stack uses it, the parameter P = W_eff / mult the
// optimizer trains (W_eff = mult P, dLoss/dP = mult dLoss/dW_eff), its rate, and Adam's m and v of P.
struct RefParam {
  Eigen::MatrixXd W, m, v;
  double mult = 1, lr = 0;
};

// The configuration of edges_adam_sgd_reference: reference_config's stack under mup at m_N = width /
// base_width = 2, with an embedding of a Gaussian input and a readout.
Config edge_config(Update u) {
  Config c = reference_config(u);
  c.input_width = 6;
  c.output_width = 5;
  c.base_width = 8;
  c.parametrization = "mup";
  return c;
}

// x_0 = u W_emb, x_{k+1} = x_k + relu(x_k W1_k) W2_k, z = x_2 W_out, loss sum g * z (g the readout
// direction), each matrix stepped by SGD or Adam (Kingma & Ba 2015 Alg. 1) on P in plain Eigen, with muP's
// rules written out by hand at m_N = 2 (microsoft/mup: MuReadout's forward x / width_mult, mup/layer.py
// l.53-55 @16ef490; MuAdam divides hidden matrices' rate by width_mult, leaves vector-like ones alone,
// mup/optim.py l.59-67; MuSGD multiplies vector-like ones' rate by width_mult, l.102-112 @0518b39).
// Returns, before each step and after the last, mean(x_l^2) at l = 0 and 2, the logits' mean |z| and
// mean |z_s - z_0|, and per matrix (emb, W1_0, W2_0, W1_1, W2_1, out) ||W_s - W_0||_F / ||W_0||_F and mean
// |x dW| of its input x: docs/metrics.md's coordinate-check definitions, written out here.
struct RefStep {
  double act0, act2, z_abs, z_change;
  std::array<double, 6> rel_dw, dwx;
};
std::vector<RefStep> reference_with_edges(const Config& c, int steps) {
  using M = Eigen::MatrixXd;
  const StackShape shape(c);
  const auto placement = placement_for(c);
  const bool adam = c.update == Update::adam;
  const double lr = c.update_lr, mN = 2;
  const auto drawn = [&](int rows, int cols, DrawKey key, double std) {
    Mat<double> w;
    draw_matrix(w, rows, cols, key, std, 1);
    return M(w);
  };
  const int T = c.tokens, d = c.width, H = int(std::lround(c.mlp_ratio * d)), K = c.depth;
  std::vector<RefParam> p;  // emb, W1_0, W2_0, W1_1, W2_1, out
  // The embedding: fan_in init (1/sqrt(6)), SGD rate x m_N; the readout: std 1/sqrt(base_width) times its
  // multiplier 1/m_N, SGD rate x m_N; hidden: 1/sqrt(fan_in), Adam rate / m_N.
  p.push_back(
      {drawn(6, d, DrawKey{c.seed, 0, 0, Stream::wemb}, 1 / std::sqrt(6.0)), {}, {}, 1, adam ? lr : lr * mN});
  for (int k = 0; k < K; ++k)
    for (auto [w, rows, cols] : {std::tuple{WeightKind::w1, d, H}, {WeightKind::w2, H, d}})
      p.push_back({drawn(rows, cols, DrawKey{c.seed, 0, std::uint32_t(k), weight_stream(WeightId{w})},
                         1 / std::sqrt(double(rows))),
                   {},
                   {},
                   1,
                   adam ? lr / mN : lr});
  p.push_back({drawn(d, 5, DrawKey{c.seed, 0, std::uint32_t(K), Stream::wout}, 1 / (mN * std::sqrt(8.0))),
               {},
               {},
               1 / mN,
               adam ? lr : lr * mN});
  for (RefParam& q : p) q.m = q.v = M::Zero(q.W.rows(), q.W.cols());
  std::vector<M> W0;
  for (const RefParam& q : p) W0.push_back(q.W);
  M z0;
  M u(T, 6), g(T, 5);
  for (int t = 0; t < T; ++t) {
    for (int i = 0; i < 6; ++i) u(t, i) = input_entry(c.seed, 0, t, i, 6, c.input_std, c.input_corr);
    for (int i = 0; i < 5; ++i) g(t, i) = readout_entry(c.seed, 0, t, i, 5);
  }
  std::vector<RefStep> out;
  for (int s = 0; s <= steps; ++s) {
    std::vector<M> x{u * p[0].W}, h(K), inputs{u};
    for (int k = 0; k < K; ++k) {
      h[k] = x[k] * p[1 + 2 * k].W;
      x.push_back(x[k] + h[k].cwiseMax(0.0) * p[2 + 2 * k].W);
      inputs.push_back(x[k]);
      inputs.push_back(h[k].cwiseMax(0.0));
    }
    inputs.push_back(x[K]);
    const M z = x[K] * p.back().W;
    if (s == 0) z0 = z;
    RefStep r{x[0].squaredNorm() / double(T * d),
              x[K].squaredNorm() / double(T * d),
              z.cwiseAbs().mean(),
              (z - z0).cwiseAbs().mean(),
              {},
              {}};
    for (std::size_t i = 0; i < p.size(); ++i) {
      r.rel_dw[i] = (p[i].W - W0[i]).norm() / W0[i].norm();
      r.dwx[i] = (inputs[i] * (p[i].W - W0[i])).cwiseAbs().mean();
    }
    out.push_back(r);
    if (s == steps) break;
    std::vector<M> grad(p.size());  // dLoss/dW_eff
    grad.back() = x[K].transpose() * g;
    M dx = g * p.back().W.transpose();
    for (int k = K - 1; k >= 0; --k) {
      const M a = h[k].cwiseMax(0.0);
      grad[2 + 2 * k] = a.transpose() * dx;
      const M dh = (dx * p[2 + 2 * k].W.transpose()).cwiseProduct((h[k].array() > 0).cast<double>().matrix());
      grad[1 + 2 * k] = x[k].transpose() * dh;
      dx = dx + dh * p[1 + 2 * k].W.transpose();
    }
    grad[0] = u.transpose() * dx;
    const double c1 = 1 - std::pow(c.adam_beta1, s + 1), c2 = 1 - std::pow(c.adam_beta2, s + 1);
    for (std::size_t i = 0; i < p.size(); ++i) {
      RefParam& q = p[i];
      const M gp = q.mult * grad[i];  // dLoss/dP
      M step = q.lr * gp;
      if (adam) {
        q.m = c.adam_beta1 * q.m + (1 - c.adam_beta1) * gp;
        q.v = c.adam_beta2 * q.v + (1 - c.adam_beta2) * gp.cwiseProduct(gp);
        step = (q.lr * (q.m / c1).array() / ((q.v / c2).array().sqrt() + c.adam_eps)).matrix();
      }
      q.W -= q.mult * step;  // W_eff = mult P
    }
  }
  return out;
}

}  // namespace

TEST_CASE("edges_adam_sgd_reference: embedding and readout stepped by muP's rules, against an Eigen loop") {
  for (const Update u : {Update::sgd, Update::adam}) {
    INFO(normsim::vocab::name(u));
    const Config c = edge_config(u);
    // The rules the reference writes out by hand are the preset's (muP at m_N = 2).
    const StackShape shape(c);
    CHECK(edge_std(shape, Edge::readout) == Approx(1 / (2 * std::sqrt(8.0))).epsilon(1e-15));
    CHECK(edge_param_rule(shape, Edge::readout).mult == 0.5);
    CHECK(edge_param_rule(shape, Edge::embedding).lr == (u == Update::adam ? 0.01 : 0.02));
    CpuBackend cpu(1);
    const std::vector<int> sample0{0};
    const auto records = cpu.run(c, sample0);
    const auto want = reference_with_edges(c, 3);
    REQUIRE(records.size() == 4);
    for (int s = 0; s <= 3; ++s) {
      INFO("step " << s);
      // float64 on both sides: rounding apart (~1e-15 relative), 1e-10 far below a step's change (below).
      CHECK(records[s].values[metric::act_sq][0] == Approx(want[s].act0).epsilon(1e-10));
      CHECK(records[s].values[metric::act_sq][2] == Approx(want[s].act2).epsilon(1e-10));
    }
    // The steps moved x_0 (only the embedding's step does) and x_2: the comparison sees the edges' steps.
    CHECK(std::abs(want[3].act0 / want[0].act0 - 1) > 1e-3);
    CHECK(std::abs(want[3].act2 / want[0].act2 - 1) > 1e-3);
  }
}

namespace {
// The coordinate-check metrics and act_sq (docs/metrics.md).
MetricSet coord_metrics() {
  return MetricSet::of({"act_sq", "dwx_w1", "dwx_w2", "rel_dw_w1", "rel_dw_w2", "dwx_emb", "dwx_out",
                        "rel_dw_emb", "rel_dw_out", "logit_mean_abs", "logit_change"});
}
}  // namespace

TEST_CASE("coord_metrics_reference: dwx_, rel_dw_ and logit_ metrics against the Eigen loop's definitions") {
  for (const Update u : {Update::sgd, Update::adam}) {
    INFO(normsim::vocab::name(u));
    Config c = edge_config(u);
    c.metrics = coord_metrics();
    CpuBackend cpu(1);
    const std::vector<int> sample0{0};
    const auto records = cpu.run(c, sample0);
    const auto want = reference_with_edges(c, 3);
    REQUIRE(records.size() == 4);
    const auto value = [&](int s, int m, int i) { return records[std::size_t(s)].values[m][std::size_t(i)]; };
    // Step 0: the logits' size; no update yet, so no update size and no change is stored.
    CHECK(value(0, metric::logit_mean_abs, 2) == Approx(want[0].z_abs).epsilon(1e-10));
    for (const int m : {metric::logit_change, metric::dwx_out, metric::rel_dw_out})
      CHECK(std::isnan(value(0, m, 2)));
    CHECK(std::isnan(value(0, metric::dwx_w1, 0)));
    // float64 on both sides; dW = W_s - W_0 is about lr = 1e-2 of W, so its rounding is ~1e-14 relative:
    // 1e-9 is far above that and far below any step's change (the steps differ by tens of per cent).
    for (int s = 1; s <= 3; ++s) {
      INFO("step " << s);
      const RefStep& r = want[std::size_t(s)];
      CHECK(value(s, metric::logit_mean_abs, 2) == Approx(r.z_abs).epsilon(1e-10));
      CHECK(value(s, metric::logit_change, 2) == Approx(r.z_change).epsilon(1e-9));
      const std::array<std::tuple<int, int, int>, 6> at{std::tuple{metric::rel_dw_emb, metric::dwx_emb, 0},
                                                        {metric::rel_dw_w1, metric::dwx_w1, 0},
                                                        {metric::rel_dw_w2, metric::dwx_w2, 0},
                                                        {metric::rel_dw_w1, metric::dwx_w1, 1},
                                                        {metric::rel_dw_w2, metric::dwx_w2, 1},
                                                        {metric::rel_dw_out, metric::dwx_out, 2}};
      for (std::size_t i = 0; i < at.size(); ++i) {
        INFO("matrix " << i);
        const auto [rel, dwx, index] = at[i];
        CHECK(r.rel_dw[i] > 0);
        CHECK(value(s, rel, index) == Approx(r.rel_dw[i]).epsilon(1e-9));
        CHECK(value(s, dwx, index) == Approx(r.dwx[i]).epsilon(1e-9));
      }
    }
  }
}

TEST_CASE("coord_metrics_need_steps: asking them without steps is refused, naming the key") {
  Config c = small(Update::adam, 0);
  c.metrics = MetricSet::of({"act_sq", "rel_dw_w1"});
  const auto issues = validate(c);
  REQUIRE(issues.size() == 1);
  CHECK(issues[0].key == "metrics");
  CHECK(issues[0].message.find("rel_dw_w1") != std::string::npos);
  c.steps = 2;
  CHECK(validate(c).empty());
}

TEST_CASE("steps_thread_invariant: 1 and 2 threads give the same records, bit for bit") {
  for (const Update u : {Update::sgd, Update::adam})
    for (const bool edges : {false, true}) {
      INFO(normsim::vocab::name(u) << (edges ? " with token embedding and readout" : ""));
      Config c = small(u, 3);
      c.batches = normsim::vocab::Batches::fresh;
      if (edges) {
        c.vocab = 11;
        c.output_width = 7;
        c.parametrization = "mup";
        c.base_width = 8;
        c.metrics = coord_metrics();
      }
      const auto one = run_cpu(c, 1), two = run_cpu(c, 2);
      REQUIRE(one.size() == 8);
      CHECK(same_records(one, two));
      for (std::size_t i = 0; i < one.size(); ++i) CHECK(one[i].step == int(i % 4));
    }
}

TEST_CASE("fresh_vs_fixed: step 0 is the same draw, and later steps differ only with fresh batches") {
  Config fixed = small(Update::adam, 2), fresh = fixed;
  fresh.batches = normsim::vocab::Batches::fresh;
  const auto a = run_cpu(fixed, 2), b = run_cpu(fresh, 2), again = run_cpu(fixed, 2);
  CHECK(same_records(at_step(a, 0), at_step(b, 0)));
  CHECK(same_records(a, again));
  for (int s : {1, 2}) {
    INFO("step " << s);
    // Another batch changes every stream past x_0 (a fresh input).
    CHECK_FALSE(
        same_bits(at_step(a, s)[0].values[metric::act_sq][0], at_step(b, s)[0].values[metric::act_sq][0]));
    // output_change compares batch 0 at step s with batch 0 at init in both: finite and positive in both.
    CHECK(at_step(a, s)[0].values[metric::output_change][4] > 0);
    CHECK(at_step(b, s)[0].values[metric::output_change][4] > 0);
  }
}

TEST_CASE("steps_memory_refusal: the optimizer's state is counted and a stack too large is refused") {
  Config c = small(Update::adam, 2);
  CHECK(cpu_optimizer_bytes(c) == 3 * cpu_stack_weight_bytes(c));
  c.update = Update::sgd;
  CHECK(cpu_optimizer_bytes(c) == cpu_stack_weight_bytes(c));
  c.steps = 0;
  CHECK(cpu_optimizer_bytes(c) == 0);
  // Width 8192 x depth 64, MLP: 64 x 2 x 8192 x 32768 floats = 137 GB of weights, 412 GB with Adam's state;
  // a machine of 64 GB is told which keys and how much.
  c = small(Update::adam, 2);
  c.width = 8192;
  c.depth = 64;
  const std::string why = cpu_memory_refusal(c, 1, 64e9);
  CHECK(why.find("'steps'") != std::string::npos);
  CHECK(why.find("optimizer's state") != std::string::npos);
  c.steps = 0;
  c.update = Update::none;
  CHECK(cpu_memory_refusal(c, 1, 64e9).empty());  // without steps the same stack is drawn matrix by matrix
}

namespace {
const char* kGrid =
    "placement = [\"pre\", \"post\"]\ndepth = 2\nwidth = 8\ntokens = 3\nsamples = 3\nupdate = \"adam\"\n"
    "steps = 2\nbatches = \"fresh\"\n";

SweepOptions options(const std::filesystem::path& out, int unit_samples) {
  SweepOptions o;
  o.out = out;
  o.unit_samples = unit_samples;
  return o;
}
}  // namespace

TEST_CASE("steps_resume: an interrupted grid with steps, resumed, writes the uninterrupted files") {
  ScratchDir whole("steps_whole"), cut("steps_cut");
  const Grid grid = parse_grid(kGrid, "g.toml");
  std::ostringstream err;
  CpuBackend cpu(2);
  run_sweep(grid, cpu, options(whole / "out", 1), err);
  // Half the units saved as part files (format 3), as a run that stopped would leave them.
  SweepOptions o = options(cut / "out", 1);
  const int unit_samples = prepare_out(grid, o);
  const auto units = make_units(grid, unit_samples);
  for (std::size_t i = 0; i < units.size(); i += 2)
    save_part(o.out, run_unit(cpu, grid, units[i]), grid_id(grid));
  CHECK(read_text(o.out / "parts" / units[0].part_name()).rfind("normsim-part 3", 0) == 0);
  SweepOptions resume = options(cut / "out", -1);
  resume.resume = true;
  const auto report = run_sweep(grid, cpu, resume, err);
  CHECK(report.units_resumed == 3);
  for (const char* file : {"layers.csv", "summary.csv", "nonfinite.csv", "theory.csv"}) {
    INFO(file);
    if (std::filesystem::exists(whole / "out" / file))
      CHECK(read_text(cut / "out" / file) == read_text(whole / "out" / file));
  }
  // The step column follows k in every table; step 2 is there.
  const std::string layers = read_text(whole / "out" / "layers.csv");
  CHECK(layers.find(",metric,l,k,step,value\n") != std::string::npos);
  CHECK(layers.find(",act_sq,2,,2,") != std::string::npos);
}

TEST_CASE("steps0_files_identical: a grid that sets steps = 0 writes the files of one without the key") {
  ScratchDir plain("steps0_plain"), zero("steps0_zero");
  const std::string base =
      "placement = [\"pre\", \"post\"]\ndepth = 2\nwidth = 8\ntokens = 3\nsamples = 2\n"
      "update = \"sgd\"\n";
  std::ostringstream err;
  CpuBackend cpu(2);
  run_sweep(parse_grid(base, "g.toml"), cpu, options(plain / "out", 0), err);
  run_sweep(parse_grid(base + "steps = 0\nbatches = \"fixed\"\n", "g.toml"), cpu, options(zero / "out", 0),
            err);
  for (const char* file : {"layers.csv", "summary.csv", "nonfinite.csv"}) {
    INFO(file);
    CHECK(read_text(zero / "out" / file) == read_text(plain / "out" / file));
    CHECK(read_text(zero / "out" / file).find("step") == std::string::npos);
  }
}
