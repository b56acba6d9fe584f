// The mean field of lanes and of the embedding skip (docs/design/multistream.md 3.4, step S4) against the
// identities the design derives at the sources' inits: hyper-connections at the official init are Pre-LN,
// mHC at lucidrains' init is Pre-LN with branch scale 2 sigmoid(1), nanochat's blocks with zero output
// matrices follow their scalar recursion. And the parts of a joint Gram reproduce it.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "theory/meanfield.hpp"
#include "theory/placements/lane_gram.hpp"

using namespace normsim::theory;

namespace {

// experiments/placements/hc.toml's blocks (lucidrains/hyper-connections @4775103; r = k mod n, the lane the
// branch reads, written k - n*floor(k/n)).
const std::string kHc2 = "[[1,0],[0,1]] @ x + [1,1] * F(N(k - 2*floor(k/2) < 1 ? x[0] : x[1]))";
const std::string kHc4 =
    "[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]] @ x + [1,1,1,1] * F(N(k - 4*floor(k/4) < 1 ? x[0] : "
    "k - 4*floor(k/4) < 2 ? x[1] : k - 4*floor(k/4) < 3 ? x[2] : x[3]))";
const std::string kMhc4 =
    "sinkhorn([[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]], 20) @ x + "
    "[2*sigmoid(1),2*sigmoid(1),2*sigmoid(1),2*sigmoid(1)] * F(N(k - 4*floor(k/4) < 1 ? "
    "[sigmoid(1),sigmoid(0),sigmoid(0),sigmoid(0)] @ x : k - 4*floor(k/4) < 2 ? "
    "[sigmoid(0),sigmoid(1),sigmoid(0),sigmoid(0)] @ x : k - 4*floor(k/4) < 3 ? "
    "[sigmoid(0),sigmoid(0),sigmoid(1),sigmoid(0)] @ x : [sigmoid(0),sigmoid(0),sigmoid(0),sigmoid(1)] @ x))";

StackSpec stack(SublayerKind sublayer, const std::string& block) {
  StackSpec s;
  s.sublayer = sublayer;
  s.activation = Activation::gelu;
  s.causal = sublayer != SublayerKind::mlp;
  s.depth = 8;
  s.width = 256;
  s.rho0 = 0.3;
  s.v0 = 0.8;
  if (!block.empty()) s.placement = Placement::custom, s.block = block;
  return s;
}

// Every predicted series of `a` equals `b`'s within `rel` (relative); jac_sq only where `a` predicts it.
void require_same(const MeanFieldProfile& a, const MeanFieldProfile& b, double rel) {
  for (const char* name : {"act_sq", "grad_sq", "token_cos", "cos_next", "rel_update", "branch_sq",
                           "gradw_w1", "gradw_w2", "jac_sq"}) {
    const Series &x = *a.metric(name), &y = *b.metric(name);
    REQUIRE(x.size() == y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO(name << " at " << i);
      if (!x[i]) {
        CHECK((std::string(name) == "jac_sq" || !y[i]));
        continue;
      }
      REQUIRE(y[i]);
      CHECK(std::abs(*x[i] - *y[i]) <= rel * std::abs(*y[i]) + 1e-300);
    }
  }
}

}  // namespace

// Equal lanes (copies of x_0, mixing I_n, beta = 1) stay equal and each is Pre-LN's stream; the readout's
// norm of n x_K gives each lane 1/n of Pre-LN's gradient, and the lanes' sum Pre-LN's. With eps = 0 (N(n x) =
// N(x)) the identity is exact; the joint Gram's eigen-decomposition leaves rounding of a few ulps a layer.
TEST_CASE("theory_hc_init_is_preln") {
  for (SublayerKind sub : {SublayerKind::mlp, SublayerKind::transformer})
    for (const std::string& block : {kHc2, kHc4}) {
      INFO(block);
      const MeanFieldProfile hc = meanfield(stack(sub, block)), pre = meanfield(stack(sub, ""));
      require_same(hc, pre, 1e-12);
      for (const auto& j : hc.jac_sq) CHECK_FALSE(j);  // not defined on lanes
    }
}

// lucidrains' mHC init: H_res = sinkhorn(I) is doubly stochastic (rows sum to 1: equal lanes stay equal),
// H_pre sums to sigmoid(1) + 3/2, which N absorbs (eps = 0), and H_post = 2 sigmoid(1) on every lane: Pre-LN
// with branch_scale 2 sigmoid(1). Sinkhorn's sums are 1 within rounding, so this is a tolerance test.
TEST_CASE("theory_mhc_lucidrains_init") {
  for (SublayerKind sub : {SublayerKind::mlp, SublayerKind::transformer}) {
    StackSpec pre = stack(sub, "");
    pre.branch_scale = "2*sigmoid(1)";
    require_same(meanfield(stack(sub, kMhc4)), meanfield(pre), 1e-12);
  }
}

// nanochat @92d63d4 gpt.py l.230, 232: c_proj of attention and MLP zero at init, so every branch adds 0 and
// x <- lam_b x + mu_b x0 before each block b (l.495, 500), lam_b = 1.15 - 0.10 b/(L-1), mu_b = 0.20 - 0.15
// b/(L-1) (l.238, 241): x_l = a x_0 with a_0 = 1, a_{b+1} = lam_b a_b + mu_b; act_sq a^2 v0, token_cos rho0.
// Backward: dx_K/dx_l = prod_{b' > b} lam_b' for a layer inside or after block b (emb held), and a_L at x_0
// (emb is x_0); the readout's norm gives g_K = (1 - 2/d) / (a_L^2 v0).
TEST_CASE("theory_nanochat_recursion") {
  StackSpec s = stack(SublayerKind::transformer,
                      "(1.15 - 0.1*b/(L-1))*x + (0.2 - 0.15*b/(L-1))*emb + "
                      "F(N((1.15 - 0.1*b/(L-1))*x + (0.2 - 0.15*b/(L-1))*emb)); x + F(N(x))");
  s.depth = 12;
  s.sigma_sq.wo = 0.0, s.sigma_sq.w2 = 0.0;
  const MeanFieldProfile p = meanfield(s);
  const int blocks = 6;
  std::vector<double> a{1.0}, lam, mu;
  for (int b = 0; b < blocks; ++b) {
    lam.push_back(1.15 - 0.1 * b / (blocks - 1)), mu.push_back(0.2 - 0.15 * b / (blocks - 1));
    a.push_back(lam.back() * a.back() + mu.back());
  }
  const double g_out = (1.0 - 2.0 / s.width) / (a.back() * a.back() * s.v0);
  for (int l = 0; l <= s.depth; ++l) {
    INFO("layer " << l);
    const int done = (l + 1) / 2;  // blocks whose skip x_l has passed
    CHECK(*p.act_sq[std::size_t(l)] ==
          Approx(a[std::size_t(done)] * a[std::size_t(done)] * s.v0).epsilon(1e-12));
    CHECK(*p.token_cos[std::size_t(l)] == Approx(s.rho0).epsilon(1e-12));
    double path = 1.0;
    for (int b = done; b < blocks; ++b) path *= lam[std::size_t(b)];
    if (l == 0) path = a.back();
    CHECK(*p.grad_sq[std::size_t(l)] == Approx(path * path * g_out).epsilon(1e-12));
  }
}

// modded-nanogpt 5db4da38 train_gpt.py l.211-214 starts its lambdas at [1, 0]: the skip is absent at init.
TEST_CASE("theory_embedding_skip_zero_is_preln") {
  for (SublayerKind sub : {SublayerKind::mlp, SublayerKind::transformer})
    require_same(meanfield(stack(sub, "1 * x + 0 * emb + F(N(1 * x + 0 * emb))")), meanfield(stack(sub, "")),
                 1e-12);
}

// The parts of a joint Gram reproduce it: three values built from four known parts (so A has full rank 3 and
// B lies in its range), then two copies of one value and a third independent one (rank 2).
TEST_CASE("lane_parts_reproduce_the_joint_gram") {
  using normsim::theory::detail::LaneGram;
  const std::vector<std::vector<double>> c = {
      {1.0, 0.5, -0.3, 0.0}, {0.2, -1.0, 0.0, 0.7}, {0.0, 0.4, 1.2, 0.1}};
  const std::vector<TokenGram> z = {{1.0, 0.6}, {0.5, 0.0}, {2.0, -0.1}, {0.3, 0.3}};
  for (const bool copies : {false, true}) {
    std::vector<std::vector<double>> rows = c;
    if (copies) rows[1] = rows[0];
    LaneGram g(3, {});
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int p = 0; p < 4; ++p)
          g(i, j) = g(i, j) + (rows[std::size_t(i)][std::size_t(p)] * rows[std::size_t(j)][std::size_t(p)]) *
                                  z[std::size_t(p)];
    const auto parts = normsim::theory::detail::lane_parts(g);
    CHECK(parts.r == (copies ? 2 : 3));
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        TokenGram back;
        for (int p = 0; p < parts.r; ++p)
          back =
              back + (parts.coef[std::size_t(i * parts.r + p)] * parts.coef[std::size_t(j * parts.r + p)]) *
                         TokenGram{1.0, parts.off[std::size_t(p)]};
        CHECK(back.diag == Approx(g(i, j).diag).margin(1e-13));
        CHECK(back.off == Approx(g(i, j).off).margin(1e-13));
      }
  }
}

// What the joint Gram does not carry is refused with its reason.
TEST_CASE("lanes_refuse_what_is_not_carried") {
  StackSpec s = stack(SublayerKind::mlp, kHc2);
  s.norm = NormKind::dyt;
  CHECK_THROWS_WITH(meanfield(s), Catch::Contains("a block of 2 lanes with a pointwise norm"));
  s = stack(SublayerKind::mlp, "x + 0.1 * emb + F(N(x))");
  s.random_update_scale = 0.1;
  CHECK_THROWS_WITH(meanfield(s), Catch::Contains("a block that reads emb under a random update"));
}

// An overflowing block of lanes (no norm, huge gains) predicts nothing past the overflow, and says where.
TEST_CASE("lanes_overflow_predicts_nothing_past_it") {
  StackSpec s = stack(SublayerKind::mlp, "[[1,0],[0,1]] @ x + [1,0.5] * F([1,0] @ x)");
  s.sigma_sq.w2 = 1e150;
  s.depth = 6;
  const MeanFieldProfile p = meanfield(s);
  CHECK(p.act_sq[1].has_value());
  CHECK_FALSE(p.act_sq[6].has_value());
  CHECK_FALSE(p.grad_sq[0].has_value());
  CHECK_FALSE(p.nonfinite.empty());
}
