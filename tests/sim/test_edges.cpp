// The edge matrices (sim/edges.hpp; docs/design/parametrization.md 3.4): their gradients against central
// finite differences, the token embedding's rows, their draws' std, and that a stack without them is the
// stack it was. In float64 with h = 1e-6: truncation O(h^2) and rounding O(1e-16 / h) stay below 1e-8 on
// O(1) gradients, so 1e-6 absolute + 1e-5 relative (as tests/sim/test_backward_fd.cpp) is loose.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "same_records.hpp"
#include "sim/cpu/cpu_backend.hpp"
#include "sim/cpu/cpu_tape_device.hpp"
#include "sim/cpu/update_pass.hpp"
#include "sim/edges.hpp"
#include "sim/inputs.hpp"
#include "sim/metrics.hpp"
#include "sim/parametrization.hpp"
#include "sim/run/result_rows.hpp"
#include "sim/run/sweep.hpp"
#include "sim/sample_metrics.hpp"
#include "sim/stack_build.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;
using normsim::vocab::Loss;

namespace {

Config edged(int input_width, int vocab, int output_width, Loss loss) {
  Config c;
  c.activation = normsim::vocab::Activation::gelu;  // smooth: no kink within h of a pre-activation
  c.width = 6;
  c.tokens = 3;
  c.depth = 2;
  c.mlp_ratio = 2.0;
  c.precision = normsim::vocab::Precision::float64;
  c.input_width = input_width;
  c.vocab = vocab;
  c.output_width = output_width;
  c.loss = loss;
  c.update = normsim::vocab::Update::sgd;  // the update records dLoss/dW_e
  return c;
}

// The loss of sample 0 with W_e(i, j) moved by delta (e, i, j unused when delta = 0); with `grads`, the
// gradients the backward records for both edge matrices.
double loss_at(const Config& c, Edge e, int i, int j, double delta,
               std::vector<Mat<double>>* grads = nullptr) {
  const StackShape shape(c);
  const std::shared_ptr<const Placement> p = placement_for(c);
  const SampleKey key{c.seed, 0};
  WeightUpdate<double> update(c, key.seed, key.sample);
  CpuTape<double> g(shape, *p, key, nullptr, UpdateHooks<double>{&update, nullptr});
  if (delta != 0) g.device().edge_matrix(e)(i, j) += delta;
  const StackValues sv = build_stack(g, shape, *p, g.input(input_matrix<double>(c, key)));
  const Mat<double>& z = g.value(sv.loss_input());
  Mat<double> dz(z.rows(), z.cols());
  double loss = 0;
  for (int t = 0; t < z.rows(); ++t)
    for (int o = 0; o < z.cols(); ++o) {
      const double r = z(t, o) - target_entry(c.seed, 0, t, o, int(z.cols()));
      dz(t, o) = c.loss == Loss::mse ? r : readout_entry(c.seed, 0, t, o, int(z.cols()));
      loss += c.loss == Loss::mse ? 0.5 * r * r : dz(t, o) * z(t, o);
    }
  if (grads) {
    g.backward(sv.loss_input(), dz);
    for (const Edge f : {Edge::embedding, Edge::readout}) grads->push_back(update.edge_gradient(f));
  }
  return loss;
}

// Every entry of dLoss/dW_e of each edge matrix c has; returns how many were compared.
int check_edges_fd(const Config& c) {
  std::vector<Mat<double>> grads;
  loss_at(c, Edge::embedding, 0, 0, 0.0, &grads);
  const double h = 1e-6;
  int compared = 0;
  for (const Edge e : {Edge::embedding, Edge::readout}) {
    if (!has_edge(c, e)) continue;
    const Mat<double>& grad = grads[std::size_t(e)];
    REQUIRE(grad.rows() == edge_dims(c, e).rows);
    REQUIRE(grad.cols() == edge_dims(c, e).cols);
    for (int i = 0; i < grad.rows(); ++i)
      for (int j = 0; j < grad.cols(); ++j) {
        const double fd = (loss_at(c, e, i, j, h) - loss_at(c, e, i, j, -h)) / (2 * h);
        INFO(edge_name(e) << " (" << i << ", " << j << ") loss " << c.loss << " vocab " << c.vocab);
        REQUIRE(grad(i, j) == Approx(fd).margin(1e-6).epsilon(1e-5));
        ++compared;
      }
  }
  return compared;
}

}  // namespace

TEST_CASE("edge_matrices_fd", "[edges]") {
  for (const Loss loss : {Loss::readout, Loss::mse}) {
    CHECK(check_edges_fd(edged(5, 0, 4, loss)) == 5 * 6 + 6 * 4);  // a dense embedding and a readout
    CHECK(check_edges_fd(edged(0, 7, 4, loss)) == 7 * 6 + 6 * 4);  // token ids
    CHECK(check_edges_fd(edged(5, 0, 0, loss)) == 5 * 6);          // the loss on y
  }
  Config post = edged(5, 0, 4, Loss::readout);
  post.placement = normsim::vocab::Placement::post;
  post.input_norm = true;
  CHECK(check_edges_fd(post) == 5 * 6 + 6 * 4);
}

// sgd moves W_emb by -lr dLoss/dW_emb (the gradient checked above), so x_0 moves by -lr u G and
// output_change at l = 0 (no input norm) is lr^2 ||u G||^2 / ||u W||^2, to rounding in float64.
TEST_CASE("sgd steps the embedding by its gradient", "[edges]") {
  Config c = edged(5, 0, 4, Loss::readout);
  c.update_lr = 0.1;
  c.metrics.insert(metric::output_change);
  std::vector<Mat<double>> grads;
  loss_at(c, Edge::embedding, 0, 0, 0.0, &grads);
  const StackShape shape(c);
  const std::shared_ptr<const Placement> p = placement_for(c);
  CpuTape<double> g(shape, *p, SampleKey{c.seed, 0});
  const Mat<double> u = input_matrix<double>(c, SampleKey{c.seed, 0});
  const double expected = (c.update_lr * u * grads[0]).squaredNorm() /
                          (u * g.device().edge_matrix(Edge::embedding)).squaredNorm();
  CpuBackend cpu(1);
  const std::vector<SampleRecord> r = cpu.run(c, std::vector<int>{0});
  CHECK(r.at(0).values[metric::output_change][0] == Approx(expected).epsilon(1e-9));
  CHECK(expected > 1e-6);
}

// x_0[t] is row id_t of W_emb, bit for bit (the one-hot product adds exact zeros), and the ids cover the
// vocabulary.
TEST_CASE("the token embedding's x_0 is W_emb's rows of the drawn ids", "[edges]") {
  Config c = edged(0, 11, 0, Loss::readout);
  c.tokens = 256;
  const StackShape shape(c);
  const std::shared_ptr<const Placement> p = placement_for(c);
  CpuTape<double> g(shape, *p, SampleKey{c.seed, 0});
  const StackValues sv = build_stack(g, shape, *p, g.input(input_matrix<double>(c, SampleKey{c.seed, 0})));
  const Mat<double>& W = g.device().edge_matrix(Edge::embedding);
  std::vector<int> seen(std::size_t(c.vocab), 0);
  for (int t = 0; t < c.tokens; ++t) {
    const int id = token_id(c.seed, 0, t, c.vocab);
    REQUIRE(id >= 0);
    REQUIRE(id < c.vocab);
    ++seen[std::size_t(id)];
    CHECK(g.value(sv.stream[0]).row(t) == W.row(id));
  }
  for (const int n : seen)
    CHECK(n > 0);  // 256 draws miss one of 11 ids with probability < 11 (10/11)^256 < 3e-10
}

// The std of each edge matrix: the init key's rule of its fans, or the parametrization's row times its
// multiplier (microsoft/mup's MuReadout, design note 1a: std 1/sqrt(base_width), multiplier 1/m_N).
TEST_CASE("edge_std follows the init key and the parametrization", "[edges]") {
  Config c = edged(5, 0, 4, Loss::readout);
  c.width = 64;
  CHECK(edge_std(StackShape(c), Edge::embedding) == Approx(1 / std::sqrt(5.0)));
  CHECK(edge_std(StackShape(c), Edge::readout) == Approx(1 / std::sqrt(64.0)));
  c.vocab = 9, c.input_width = 0;
  CHECK(edge_std(StackShape(c), Edge::embedding) == Approx(1.0));  // a token's fan_in is 1
  c.init = normsim::vocab::Init::fixed, c.init_std = 0.02;
  CHECK(edge_std(StackShape(c), Edge::embedding) == Approx(0.02));
  c.update = normsim::vocab::Update::none;
  c.parametrization = "mup", c.base_width = 16;  // m_N = 4
  CHECK(edge_std(StackShape(c), Edge::readout) == Approx(1 / std::sqrt(16.0) / 4));
  CHECK(edge_std(StackShape(c), Edge::embedding) == Approx(0.02));  // mup sets no embedding std
  c.parametrization = "olmo_mitchell";
  CHECK(edge_std(StackShape(c), Edge::embedding) == Approx(0.98658 / std::sqrt(64.0)));
  c.parametrization = "custom", c.param_rules = "readout: std = 0.5, mult = 3";
  CHECK(edge_std(StackShape(c), Edge::readout) == Approx(1.5));
}

// docs/design/parametrization.md 4.4: with input_width, vocab and output_width 0 (set or not) a stack runs
// the tape it ran before them (the golden digests, tests/sim/test_placement_golden.cpp, pin its bits), and
// the keys are columns only where a configuration sets them.
TEST_CASE("no_edges_unchanged", "[edges]") {
  const Grid plain = parse_grid("width = 16\ntokens = 4\ndepth = 2\nsamples = 2\n", "a.toml");
  const Grid zeros = parse_grid(
      "width = 16\ntokens = 4\ndepth = 2\nsamples = 2\ninput_width = 0\nvocab = 0\noutput_width = 0\n",
      "b.toml");
  CHECK(csv_header(ResultTable::layers, zeros.configs) == csv_header(ResultTable::layers, plain.configs));
  CHECK(csv_header(ResultTable::layers, plain.configs).find("width,tokens") != std::string::npos);
  CHECK(csv_header(ResultTable::layers, plain.configs).find("output_width") == std::string::npos);
  const Grid set = parse_grid("width = 16\noutput_width = 8\n", "c.toml");
  CHECK(csv_header(ResultTable::layers, set.configs).find(",loss,output_width,") != std::string::npos);
  CpuBackend cpu(1);
  const std::vector<int> samples{0, 1};
  CHECK(normsim::test::same_records(cpu.run(plain.configs[0], samples), cpu.run(zeros.configs[0], samples)));
}

// What the config edge refuses about the edges, each naming its key.
TEST_CASE("edge matrix refusals", "[edges]") {
  Config c;
  c.input_width = 4, c.vocab = 8;
  CHECK(!validate(c).empty());
  CHECK(validate(c).front().key == "vocab");
  c.vocab = 0, c.init = normsim::vocab::Init::unit;
  CHECK(validate(c).front().key == "init");
  Config r;
  r.parametrization = "custom", r.param_rules = "readout: std = 1";
  REQUIRE(!validate(r).empty());
  CHECK(validate(r).front().message.find("column 1: a rule for the readout matrix") != std::string::npos);
  r.output_width = 3;
  CHECK(validate(r).empty());
}
