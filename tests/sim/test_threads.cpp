// Same config and seed give bit-identical records whatever the thread count, the way samples are split,
// or how many threads work inside one sample.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <tuple>
#include <vector>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/cpu/cpu_heads.hpp"
#include "sim/draws.hpp"
#include "sim/metrics.hpp"
#include "sim/sample_metrics.hpp"
#include "sim/thread_split.hpp"
#include "test_util.hpp"

using namespace normsim::sim;

namespace {
using normsim::test::same_bits;
}  // namespace

// Also with biases on every matrix (drawn, and moved by an Adam step), whose add runs in the products' column
// blocks.
TEST_CASE("records are identical for 1 and 2 threads and any sample split", "[threads]") {
  for (const bool bias : {false, true}) {
    Config c;
    c.sublayer = normsim::vocab::Sublayer::transformer;
    c.placement = normsim::vocab::Placement::pre;
    c.activation = normsim::vocab::Activation::gelu;
    c.width = 32;
    c.tokens = 8;
    c.depth = 6;
    c.bias = bias;
    c.init_bias = 0.3;
    if (bias) c.update = normsim::vocab::Update::adam;
    const std::vector<int> samples{0, 1, 2, 3, 4};
    const auto one = CpuBackend(1).run(c, samples);
    const auto two = CpuBackend(2).run(c, samples);
    const std::vector<int> tail{3, 4};
    const auto split = CpuBackend(2).run(c, tail);
    REQUIRE(one.size() == two.size());
    for (std::size_t s = 0; s < one.size(); ++s)
      for (std::size_t m = 0; m < one[s].values.size(); ++m)
        for (std::size_t l = 0; l < one[s].values[m].size(); ++l) {
          REQUIRE(same_bits(one[s].values[m][l], two[s].values[m][l]));
          if (s >= 3) REQUIRE(same_bits(one[s].values[m][l], split[s - 3].values[m][l]));
        }
  }
}

// Threads beyond the sample count work inside a sample: products split into fixed column blocks and the
// draws into fixed chunks. Widths 320 and hidden 1280 give several blocks per product
// (sim/cpu/cpu_parallel.hpp's kColumnBlock is 256) and weights of several draw chunks, so 1, 2 and 3 threads
// really split them. Every activation with a float32 vector kernel (activations_vec.hpp) is run.
TEST_CASE("one sample on 1, 2 or 3 threads gives identical records", "[threads]") {
  namespace vocab = normsim::vocab;
  for (const auto act : {vocab::Activation::gelu, vocab::Activation::swiglu, vocab::Activation::silu,
                         vocab::Activation::tanh}) {
    Config c;
    c.sublayer = normsim::vocab::Sublayer::transformer;
    c.placement = normsim::vocab::Placement::pre;
    c.activation = act;
    c.width = 320;
    // Large enough that every split is taken: products, draws, weight-gradient Grams, and the per-stream
    // metrics (sample_metrics.cpp: 9 streams of 32 x 320, 2 T^2 d each, 5.9 M operations: 3 threads).
    c.tokens = 32;
    c.depth = 4;
    const std::vector<int> one_sample{1};
    const auto t1 = CpuBackend(1).run(c, one_sample), t2 = CpuBackend(2).run(c, one_sample),
               t3 = CpuBackend(3).run(c, one_sample);
    for (std::size_t m = 0; m < t1[0].values.size(); ++m)
      for (std::size_t l = 0; l < t1[0].values[m].size(); ++l) {
        REQUIRE(same_bits(t1[0].values[m][l], t2[0].values[m][l]));
        REQUIRE(same_bits(t1[0].values[m][l], t3[0].values[m][l]));
      }
  }
}

namespace {
void require_same_records(const std::vector<SampleRecord>& a, const std::vector<SampleRecord>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t s = 0; s < a.size(); ++s) {
    REQUIRE_FALSE(a[s].values.empty());
    REQUIRE(a[s].values.size() == b[s].values.size());
    for (std::size_t m = 0; m < a[s].values.size(); ++m) {
      REQUIRE(a[s].values[m].size() == b[s].values[m].size());
      for (std::size_t l = 0; l < a[s].values[m].size(); ++l)
        REQUIRE(same_bits(a[s].values[m][l], b[s].values[m][l]));
    }
  }
}
}  // namespace

// Attention splits its heads across threads (cpu_heads.hpp's for_each_head): 8 heads of width 16 on 64
// tokens are worth 3 threads forward and backward, so 2 and 3 threads really split them, with a causal mask
// and qk_norm, HybridNorm's QKV-norm, and the decoder's cross-attention. Two samples on 4 or 5 threads run
// side by side with threads to spare (cpu_backend.cpp): the same records again.
TEST_CASE("attention gives identical records for any thread count and sample split", "[threads]") {
  using normsim::vocab::Placement, normsim::vocab::Sublayer;
  const int tokens = 64, width = 128, heads = 8, dh = width / heads;
  REQUIRE(threads_worth(heads * head_forward_work(tokens, dh), 3) == 3);
  REQUIRE(threads_worth(heads * head_backward_work(tokens, dh), 3) == 3);
  for (const auto& [sub, placement, masked] : {std::tuple{Sublayer::transformer, Placement::pre, true},
                                               std::tuple{Sublayer::attention, Placement::hybridnorm, false},
                                               std::tuple{Sublayer::decoder, Placement::pre, false}}) {
    Config c;
    c.sublayer = sub;
    c.placement = placement;
    c.causal = masked;
    c.qk_norm = masked;
    c.width = width;
    c.tokens = tokens;
    c.heads = heads;
    c.depth = 6;
    const std::vector<int> one{1}, two{0, 1};
    const auto t1 = CpuBackend(1).run(c, one);
    require_same_records(t1, CpuBackend(2).run(c, one));
    require_same_records(t1, CpuBackend(3).run(c, one));
    const auto s1 = CpuBackend(1).run(c, two);
    require_same_records(s1, CpuBackend(4).run(c, two));
    require_same_records(s1, CpuBackend(5).run(c, two));
  }
}

TEST_CASE("weight draws are identical for any thread count", "[threads]") {
  // Enough entries to be split five ways (sim/thread_split.hpp), and a partial last chunk.
  const std::size_t n = 64 * 2048 * 4 + 7;
  REQUIRE(threads_worth(16.0 * double(n), 5) == 5);
  const DrawKey key{5, 2, 3, Stream::w2};
  std::vector<float> one(n), many(n);
  fill_gaussian(one.data(), n, key, 0.7, 1);
  for (const int threads : {2, 3, 5}) {
    fill_gaussian(many.data(), n, key, 0.7, threads);
    REQUIRE(std::memcmp(one.data(), many.data(), n * sizeof(float)) == 0);
  }
}

TEST_CASE("work inside a sample is split only where each thread gets enough of it", "[threads]") {
  CHECK(threads_worth(0.0, 8) == 1);
  CHECK(threads_worth(kMinWorkPerThread * 0.9, 2) == 1);
  CHECK(threads_worth(kMinWorkPerThread * 2.5, 8) == 2);
  CHECK(threads_worth(kMinWorkPerThread * 100.0, 8) == 8);
  CHECK(threads_worth(kMinWorkPerThread * 100.0, 0) == 1);
}

namespace {
// Every tensor of one sample, in float32, with a workspace that keeps the drawn weights or redraws them.
SampleTensors sample_with(const Config& c, bool keep) {
  CpuWorkspace<float> ws;
  ws.keep_weights = keep;
  // Sample 2 after sample 1 through the same workspace: it must not read sample 1's kept weights.
  simulate_sample_cpu<float>(c, 1, ws);
  return simulate_sample_cpu<float>(c, 2, ws);
}

void require_same(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(same_bits(a[i], b[i]));
}

void require_same(const std::vector<MatD>& a, const std::vector<MatD>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].size() == b[i].size());
    REQUIRE(std::memcmp(a[i].data(), b[i].data(), std::size_t(a[i].size()) * sizeof(double)) == 0);
  }
}
}  // namespace

// CpuWorkspace::keep_weights reads the forward's weights again in the backward (and in the Jacobian probes'
// reverse passes) instead of redrawing them: every tensor is the same bit for bit, for MLP (GELU, SwiGLU),
// self- and cross-attention, and with the updates that add W + dW (random) or step on the gradients (sgd).
TEST_CASE("kept weights give the same tensors as redrawn ones", "[threads]") {
  using normsim::vocab::Activation, normsim::vocab::Sublayer, normsim::vocab::Update;
  for (const auto& [sub, act, up] : {std::tuple{Sublayer::mlp, Activation::gelu, Update::none},
                                     std::tuple{Sublayer::mlp, Activation::swiglu, Update::sgd},
                                     std::tuple{Sublayer::transformer, Activation::gelu, Update::random},
                                     std::tuple{Sublayer::decoder, Activation::relu, Update::none}}) {
    Config c;
    c.sublayer = sub;
    c.placement = normsim::vocab::Placement::pre;
    c.activation = act;
    c.update = up;
    c.bias =
        up != Update::none;  // biases where an update moves them (the drawn product's epilogue adds them)
    c.init_bias = 0.3;
    c.width = 64;
    c.tokens = 8;
    c.depth = 4;
    c.jacobian_probes = 2;
    for (const char* m : {"jac_sq", "jac_spread", "block_identity_dev"}) c.metrics.insert(metric_id(m));
    const SampleTensors kept = sample_with(c, true), redrawn = sample_with(c, false);
    require_same(kept.stream, redrawn.stream);
    require_same(kept.grad, redrawn.grad);
    require_same(kept.branch_sq, redrawn.branch_sq);
    require_same(kept.jac_sq, redrawn.jac_sq);
    require_same(kept.block_identity_dev, redrawn.block_identity_dev);
    require_same(kept.output_change, redrawn.output_change);
    REQUIRE(kept.gradw.size() == redrawn.gradw.size());
    for (std::size_t k = 0; k < kept.gradw.size(); ++k)
      for (std::size_t w = 0; w < kept.gradw[k].size(); ++w)
        REQUIRE(same_bits(kept.gradw[k][w], redrawn.gradw[k][w]));
    REQUIRE_FALSE(kept.jac_sq.empty());
    REQUIRE_FALSE((up != Update::none) == kept.output_change.empty());
  }
}
