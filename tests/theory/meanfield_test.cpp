// Mean-field recursions against the exact identities of theory.md (§2-§3, §5) and the contract of
// docs/conventions.md (series lengths, "not predicted" entries).
#include "theory/meanfield.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "theory/branch_gains.hpp"
#include "theory/placements/context.hpp"
#include "theory/summaries.hpp"
#include "vocab/names.hpp"

using namespace normsim::theory;

namespace {
StackSpec mlp_stack(Placement p, int depth, Activation act = Activation::relu) {
  StackSpec s;
  s.placement = p;
  s.depth = depth;
  s.activation = act;
  return s;
}
double at(const Series& s, int i) {
  REQUIRE(s.at(i).has_value());
  return *s.at(i);
}
}  // namespace

TEST_CASE("series have the conventions' lengths for every placement and sublayer kind") {
  for (Placement p :
       {Placement::post, Placement::pre, Placement::peri, Placement::mix, Placement::b2t, Placement::deepnorm,
        Placement::lnscale, Placement::admin, Placement::rezero, Placement::spannorm, Placement::hybridnorm,
        Placement::hybridnorm_star, Placement::none}) {
    for (SublayerKind sub : {SublayerKind::mlp, SublayerKind::attention, SublayerKind::transformer}) {
      for (Activation a : {Activation::relu, Activation::gelu, Activation::swiglu}) {
        StackSpec s = mlp_stack(p, 6, a);
        s.sublayer = sub;
        s.causal = sub == SublayerKind::transformer;
        s.rezero_alpha = 0.3;
        INFO(normsim::vocab::name(p) << " " << normsim::vocab::name(sub) << " " << normsim::vocab::name(a));
        const MeanFieldProfile m = meanfield(s);
        for (const char* name : {"act_sq", "grad_sq", "token_cos"}) {
          REQUIRE(m.metric(name)->size() == 7u);
          for (const auto& v : *m.metric(name)) CHECK((v && std::isfinite(*v)));
        }
        for (const char* name :
             {"cos_next", "rel_update", "branch_sq", "gradw_w1", "gradw_w2", "gradw_wgate"}) {
          REQUIRE(m.metric(name)->size() == 6u);
        }
        for (int k = 0; k < 6; ++k) {
          const bool mlp = sub == SublayerKind::mlp || (sub == SublayerKind::transformer && k % 2 == 1);
          CHECK(m.gradw_w2[k].has_value() == mlp);
          CHECK(m.gradw_wgate[k].has_value() == (mlp && a == Activation::swiglu));
          CHECK(at(m.cos_next, k) <= 1.0 + 1e-12);
        }
        CHECK(m.metric("eff_rank") == nullptr);
      }
    }
  }
}

TEST_CASE("Pre-LN ReLU: v_k = v0 + k q and grad_sq * v constant (theory.md §3(a), §2.2 P5)") {
  StackSpec s = mlp_stack(Placement::pre, 24);
  s.v0 = 0.7;
  s.width = 512;
  const MeanFieldProfile m = meanfield(s);
  for (int k = 0; k <= 24; ++k) {
    CHECK(at(m.act_sq, k) == Approx(preln_act_sq(0.7, 0.5, k)));
    // ||g_k||^2 v_k = ||g_out||^2 (1 - 2/d) with the final LayerNorm.
    CHECK(at(m.grad_sq, k) * at(m.act_sq, k) == Approx(1.0 - 2.0 / 512));
  }
  for (int k = 0; k < 24; ++k) {
    const double tau = k + 0.7 / 0.5;  // §3(b): cos = sqrt(tau/(tau+1)), rel. update tau^(-1/2)
    CHECK(at(m.cos_next, k) == Approx(std::sqrt(tau / (tau + 1))));
    CHECK(at(m.rel_update, k) == Approx(1.0 / std::sqrt(tau)));
    CHECK(at(m.branch_sq, k) == Approx(0.5));
  }
  s.norm = NormKind::rmsnorm;
  CHECK(at(meanfield(s).grad_sq, 0) * 0.7 == Approx(1.0 - 1.0 / 512));
}

TEST_CASE("Pre-LN GELU gradients follow the Gamma-function product of theory.md §2.2 P5") {
  const MeanFieldProfile m = meanfield(mlp_stack(Placement::pre, 32, Activation::gelu));
  const BranchGains g = mlp_gains(Activation::gelu, 1.0, 1.0);
  for (int k : {0, 8, 16, 31}) {
    CHECK(at(m.grad_sq, k) / at(m.grad_sq, 32) ==
          Approx(preln_grad_ratio(1.0, g.q, g.chi, k, 32)).epsilon(1e-10));
  }
}

TEST_CASE("Post-LN: ReLU gradients flat, GELU/SwiGLU geometric (theory.md §2.1 P4, §3(c))") {
  const MeanFieldProfile relu = meanfield(mlp_stack(Placement::post, 40));
  for (int l = 0; l <= 40; ++l) CHECK(at(relu.grad_sq, l) == Approx(1.0));
  for (int l = 1; l <= 40; ++l) CHECK(at(relu.act_sq, l) == Approx(1.0));
  for (int k = 0; k < 40; ++k) CHECK(at(relu.cos_next, k) == Approx(1.0 / std::sqrt(1.5)));  // P7
  for (Activation a : {Activation::gelu, Activation::swiglu}) {
    const MeanFieldProfile m = meanfield(mlp_stack(Placement::post, 10, a));
    const BranchGains g = mlp_gains(a, 1.0, 1.0);
    for (int k = 0; k < 10; ++k) {
      CHECK(at(m.grad_sq, k) / at(m.grad_sq, k + 1) == Approx(postln_gain_sq(g.q, g.chi)));
    }
  }
  // P5: per-token ||dL/dW2||_F = ||g_{k+1}|| ||a_k|| / sqrt(1 + q), ||a_k||^2 = d_ff M2.
  StackSpec one = mlp_stack(Placement::post, 4);
  one.tokens = 1;
  one.width = 256;
  const MeanFieldProfile m = meanfield(one);
  for (int k = 0; k < 4; ++k) {
    CHECK(at(m.gradw_w2, k) == Approx(std::sqrt(256.0 * 1024 * 0.5) / std::sqrt(1.5)));
  }
  CHECK_FALSE(m.token_cos[0].has_value());  // one token: no pairs
}

TEST_CASE("Peri-LN: v_k = v0 + k gamma^2 whatever the branch scale (theory.md §2.3)") {
  StackSpec s = mlp_stack(Placement::peri, 32);
  s.sigma_sq.w2 = 0.01;
  s.gamma = 1.3;
  s.v0 = 2.0;
  const MeanFieldProfile m = meanfield(s);
  for (int k = 0; k <= 32; ++k) CHECK(at(m.act_sq, k) == Approx(periln_act_sq(2.0, 1.69, k)));
  // ReLU: grad_sq * v constant, as Pre-LN with slope gamma^2.
  for (int k = 0; k <= 32; ++k)
    CHECK(at(m.grad_sq, k) * at(m.act_sq, k) == Approx(at(m.grad_sq, 32) * at(m.act_sq, 32)));
}

TEST_CASE("Peri-LN with eps: v_{k+1} - v_k = gamma^2 q / (q + eps) for a tiny branch (theory_notes §eps)") {
  StackSpec s = mlp_stack(Placement::peri, 16);
  s.sigma_sq.w1 = 0.01, s.sigma_sq.w2 = 0.01;  // init gain 0.1: q ~ 5e-5 gamma^2 ~ eps
  s.gamma = 1.3;
  s.eps = 1e-5;
  const double g2 = 1.69;
  const MeanFieldProfile m = meanfield(s);
  for (int k = 0; k < 16; ++k) {
    const double v = at(m.act_sq, k);
    const double u = g2 * v / (v + s.eps);                   // the input norm's output second moment
    const double q = s.sigma_sq.w2 * s.sigma_sq.w1 * u / 2;  // ReLU: q = s2 s1 u / 2
    CHECK(at(m.branch_sq, k) == Approx(q).epsilon(1e-12));
    CHECK(at(m.act_sq, k + 1) - v == Approx(g2 * q / (q + s.eps)).epsilon(1e-10));
  }
  CHECK(at(m.act_sq, 1) - at(m.act_sq, 0) < 0.9 * g2);  // visibly below the eps -> 0 step gamma^2
  // eps = 0 is the eps -> 0 recursion exactly.
  s.eps = 0.0;
  const MeanFieldProfile m0 = meanfield(s);
  for (int k = 0; k <= 16; ++k) CHECK(at(m0.act_sq, k) == Approx(periln_act_sq(1.0, g2, k)));
}

TEST_CASE("normalized input with eps: second moment gamma^2 v0 / (v0 + eps), cosine kept") {
  StackSpec s = mlp_stack(Placement::pre, 4);
  s.input_norm = true;
  s.v0 = 4e-4;  // std-0.02 embeddings
  s.rho0 = 0.3;
  s.gamma = 1.5;
  s.eps = 1e-5;
  const MeanFieldProfile m = meanfield(s);
  CHECK(at(m.act_sq, 0) == Approx(2.25 * 4e-4 / (4e-4 + 1e-5)).epsilon(1e-14));
  CHECK(at(m.act_sq, 0) == Approx(2.25 / 1.025).epsilon(1e-14));  // 2.4 % below gamma^2
  CHECK(at(m.token_cos, 0) == Approx(0.3).epsilon(1e-14));
  s.eps = 0.0;
  CHECK(at(meanfield(s).act_sq, 0) == 2.25);
}

TEST_CASE("eps at a norm's backward map: Pre-LN final norm and branch chain use gamma^2 / (v + eps)") {
  StackSpec s = mlp_stack(Placement::pre, 1, Activation::linear);
  s.width = 0;  // no finite-d factor at the final norm
  s.v0 = 1e-4;
  s.eps = 1e-5;
  const MeanFieldProfile m = meanfield(s);
  // x_1 = x_0 + F(N(x_0)), linear F with gains 1: v_1 = v0 + v0 / (v0 + eps).
  const double u = 1e-4 / 1.1e-4, v1 = 1e-4 + u;
  CHECK(at(m.act_sq, 1) == Approx(v1).epsilon(1e-14));
  CHECK(at(m.grad_sq, 1) == Approx(1.0 / (v1 + 1e-5)).epsilon(1e-14));
  // G^2 = 1 + chi gamma^2 / (v0 + eps), chi = 1.
  CHECK(at(m.grad_sq, 0) == Approx(at(m.grad_sq, 1) * (1.0 + 1.0 / 1.1e-4)).epsilon(1e-12));
}

TEST_CASE("LayerNorm Scaling: v_L = v0 + q H_L for ReLU (theory.md §2.10, §5: 3.03 at L = 32)") {
  const MeanFieldProfile m = meanfield(mlp_stack(Placement::lnscale, 32));
  CHECK(at(m.act_sq, 32) == Approx(lns_act_sq(1.0, 0.5, 32)));
  CHECK(std::abs(at(m.act_sq, 32) - 3.03) < 0.005);
  // Transformer stacks scale both norms of block b by 1/(b+1).
  StackSpec t = mlp_stack(Placement::lnscale, 8);
  t.sublayer = SublayerKind::transformer;
  const MeanFieldProfile mt = meanfield(t);
  CHECK(at(mt.branch_sq, 3) == Approx(0.5 / 2));
}

TEST_CASE("B2T: flat gradients for homogeneous branches; recursion equals the §2.5 formula") {
  const MeanFieldProfile relu = meanfield(mlp_stack(Placement::b2t, 16));
  for (int l = 0; l <= 16; l += 2) CHECK(at(relu.grad_sq, l) == Approx(1.0));
  const MeanFieldProfile gelu = meanfield(mlp_stack(Placement::b2t, 8, Activation::gelu));
  const BranchGains g = mlp_gains(Activation::gelu, 1.0, 1.0);
  for (int j = 1; j < 4; ++j) {  // input x_{2j} on the sphere for j >= 1
    CHECK(at(gelu.grad_sq, 2 * j) / at(gelu.grad_sq, 2 * j + 2) ==
          Approx(b2t_gain_sq(g.q, g.chi, g.q, g.chi)));
  }
  // An x-independent first branch (chi_A = 0, q_A = 1) with a ReLU FFN: 0.8084 (Post-LN: 1/(1+q) = 0.5).
  CHECK(std::abs(b2t_gain_sq(1.0, 0.0, 0.5, 0.5) - 0.8084) < 5e-5);
  CHECK(b2t_sum_sq(1.0, 0.5) == Approx(2.5 + 2.0 / std::sqrt(2.0)));
}

TEST_CASE("DeepNorm: per-layer gain 1 + O(K^-3/2) (theory.md §2.8)") {
  CHECK(deepnorm_alpha(16) == Approx(2.0));
  CHECK(deepnorm_beta(16) == Approx(std::pow(64.0, -0.25)));
  // ReLU: branch share q_beta/(alpha^2 + q_beta) = beta^4 q / alpha^2 = K^(-3/2)/8 to leading order.
  for (int depth : {16, 256}) {
    StackSpec s = mlp_stack(Placement::deepnorm, depth);
    s.sigma_sq.w1 = s.sigma_sq.w2 = std::pow(deepnorm_beta(depth), 2);
    const double q = at(meanfield(s).branch_sq, 3);
    CHECK(q / (std::sqrt(double(depth)) + q) * std::pow(depth, 1.5) == Approx(0.125).epsilon(0.01));
  }
  // GELU: G^2 - 1 = (chi_beta - q_beta)/(alpha^2 + q_beta) > 0 and (K^(3/2)) (G^2 - 1) bounded; it even
  // falls like K^(-1/2), because GELU is homogeneous to O(s) at the small variance s = beta^2, so
  // chi_beta - q_beta = O(beta^6) (docs/theory_notes.md).
  double previous = 0.0;
  for (int depth : {16, 64, 256, 1024}) {
    StackSpec s = mlp_stack(Placement::deepnorm, depth, Activation::gelu);
    const double b2 = std::pow(deepnorm_beta(depth), 2);
    s.sigma_sq.w1 = s.sigma_sq.w2 = b2;
    const MeanFieldProfile m = meanfield(s);
    const double excess = at(m.grad_sq, depth / 2) / at(m.grad_sq, depth / 2 + 1) - 1.0;
    const double scaled = excess * std::pow(depth, 1.5);
    INFO("K=" << depth << " G^2-1=" << excess << " scaled=" << scaled);
    CHECK(excess > 0.0);
    CHECK(excess < 0.01);
    if (previous > 0.0) CHECK(scaled < previous);
    previous = scaled;
  }
}

TEST_CASE("Admin is forward-equivalent to Pre-LN (theory.md §2.9)") {
  const MeanFieldProfile admin = meanfield(mlp_stack(Placement::admin, 12));
  const MeanFieldProfile pre = meanfield(mlp_stack(Placement::pre, 12));
  for (int k = 0; k < 12; ++k) {
    CHECK(at(admin.cos_next, k) == Approx(at(pre.cos_next, k)));
  }
  for (int l = 0; l <= 12; ++l) CHECK(at(admin.grad_sq, l) == Approx(1.0));  // ReLU: (w^2+chi)/(w^2+q) = 1
}

TEST_CASE("ReZero at alpha = 0 is the identity with zero branch gradients (theory.md §2.11)") {
  StackSpec s = mlp_stack(Placement::rezero, 10);
  s.v0 = 1.7;
  const MeanFieldProfile m = meanfield(s);
  for (int l = 0; l <= 10; ++l) {
    CHECK(at(m.act_sq, l) == Approx(1.7));
    CHECK(at(m.grad_sq, l) == Approx(at(m.grad_sq, 10)));
  }
  for (int k = 0; k < 10; ++k) {
    CHECK(at(m.gradw_w1, k) == 0.0);
    CHECK(at(m.gradw_w2, k) == 0.0);
    CHECK(at(m.cos_next, k) == Approx(1.0));
  }
}

TEST_CASE("token cosine: §3(d) recursions and the numbers checked in §3(d)") {
  StackSpec s;
  s.placement = Placement::post;
  s.sublayer = SublayerKind::attention;
  s.tokens = 64;
  s.depth = 16;
  const MeanFieldProfile post = meanfield(s);
  const double printed[] = {0.0154, 0.0448, 0.0986, 0.190, 0.326, 0.496};
  for (int l = 1; l <= 6; ++l) CHECK(std::abs(at(post.token_cos, l) - printed[l - 1]) < 6e-4);
  double rho = 0.0;
  for (int l = 1; l <= 16; ++l) {
    rho = token_cos_post_attention(rho, 1.0, 64);
    CHECK(at(post.token_cos, l) == Approx(rho));
  }
  s.placement = Placement::pre;
  const MeanFieldProfile pre = meanfield(s);
  CHECK(std::abs(at(pre.token_cos, 15) - 0.8762) < 5e-5);
  // Pre-LN attention: 1 - rho_k = v0 (1 - rho0) / v_k exactly.
  for (int l = 0; l <= 16; ++l) CHECK(1.0 - at(pre.token_cos, l) == Approx(1.0 / at(pre.act_sq, l)));
  // MLP recursions with the branch kernel.
  StackSpec g = mlp_stack(Placement::pre, 6, Activation::gelu);
  g.rho0 = 0.2;
  const MeanFieldProfile gm = meanfield(g);
  const BranchGains gains = mlp_gains(Activation::gelu, 1.0, 1.0);
  rho = 0.2;
  for (int k = 0; k < 6; ++k) {
    rho = token_cos_pre_mlp(rho, at(gm.act_sq, k), gains.q, mlp_kappa(Activation::gelu, 1.0, rho));
    CHECK(at(gm.token_cos, k + 1) == Approx(rho));
  }
}

TEST_CASE("uniform attention backward: Pre-LN G^2 = 1 + sigma_A^2 c_g / v (theory.md §1.2, §2.2)") {
  StackSpec s;
  s.placement = Placement::pre;
  s.sublayer = SublayerKind::attention;
  s.tokens = 8;
  s.depth = 2;
  s.width = 0;  // infinite width: no final-norm correction
  const MeanFieldProfile m = meanfield(s);
  // Readout gradients are token-independent at the top: c_g = 1/T for the last sublayer.
  CHECK(at(m.grad_sq, 1) / at(m.grad_sq, 2) == Approx(1.0 + (1.0 / 8) / at(m.act_sq, 1)));
}

TEST_CASE("mse loss: predicted through an output norm, not predicted without one") {
  StackSpec s = mlp_stack(Placement::pre, 4);
  s.loss = Loss::mse;
  const MeanFieldProfile with_norm = meanfield(s);
  CHECK(at(with_norm.grad_sq, 0) == Approx(at(meanfield(mlp_stack(Placement::pre, 4)).grad_sq, 0)));
  s.final_norm = false;
  const MeanFieldProfile without = meanfield(s);
  CHECK_FALSE(without.grad_sq[0].has_value());
  CHECK_FALSE(without.gradw_w2[0].has_value());
  CHECK(without.act_sq[4].has_value());
}

TEST_CASE("overflow and invalid specs are explicit") {
  StackSpec s = mlp_stack(Placement::none, 4000);
  s.sigma_sq.w1 = 2.0;
  const MeanFieldProfile m = meanfield(s);  // v grows like 2^k: overflows
  CHECK(m.act_sq[10].has_value());
  CHECK_FALSE(m.act_sq[4000].has_value());
  CHECK_FALSE(m.grad_sq[0].has_value());
  StackSpec odd = mlp_stack(Placement::b2t, 5);
  CHECK_THROWS_AS(meanfield(odd), std::invalid_argument);
  StackSpec bad = mlp_stack(Placement::pre, 4);
  bad.v0 = -1.0;
  CHECK_THROWS_AS(meanfield(bad), std::invalid_argument);
}

TEST_CASE("qk_norm changes no prediction of the uniform-attention mean field, and says so") {
  StackSpec s;
  s.sublayer = SublayerKind::transformer;
  s.depth = 8;
  const MeanFieldProfile plain = meanfield(s);
  s.qk_norm = true;
  const MeanFieldProfile normed = meanfield(s);
  for (const char* m : {"act_sq", "grad_sq", "token_cos", "branch_sq"}) {
    INFO(m);
    CHECK(*plain.metric(m) == *normed.metric(m));
  }
  int mentions = 0;
  for (const std::string& c : normed.caveats) mentions += c.find("qk_norm") != std::string::npos;
  CHECK(mentions == 1);
}

// Issue 25 1: an overflow is never a prediction of 0. TokenGram::cos() of a NaN diagonal was 0 and
// std::max(0.0, NaN) is 0, so token_cos and rel_update read 0 where the stream had overflowed; now those
// entries are absent and listed in nonfinite (theory.csv leaves them out, nonfinite.csv names them).
TEST_CASE("an overflowed mean field predicts nothing there, and says where") {
  CHECK(std::isnan(TokenGram{std::nan(""), 0.5}.cos()));
  CHECK(std::isnan(TokenGram{INFINITY, 0.5}.cos()));  // was 0.5 / inf = 0
  CHECK(TokenGram{0.0, 0.0}.cos() == 0.0);
  StackSpec s = mlp_stack(Placement::none, 4);
  s.sigma_sq.w1 = s.sigma_sq.w2 = 1e200;  // init_gain 1e100
  s.rho0 = 0.5;
  const MeanFieldProfile m = meanfield(s);
  CHECK(at(m.act_sq, 0) == 1.0);
  CHECK(at(m.token_cos, 0) == 0.5);
  for (int l = 1; l <= 4; ++l) {
    CHECK_FALSE(m.act_sq[l].has_value());
    CHECK_FALSE(m.token_cos[l].has_value());  // was 0
  }
  CHECK_FALSE(m.rel_update[0].has_value());  // was 0
  const auto listed = [&](std::string_view metric, int index) {
    for (const auto& n : m.nonfinite)
      if (n.metric == metric && n.index == index) return true;
    return false;
  };
  CHECK(listed("act_sq", 1));
  CHECK(listed("token_cos", 4));
  CHECK(listed("rel_update", 0));
  CHECK_FALSE(listed("act_sq", 0));
}

// With norm_eps = 0 a zero input to the norm stays zero, as in the simulator (N(0) = 0 forward), instead of
// the norm's output second moment gamma^2 whatever its input: x + F(N(0 * x)) keeps v = v0.
TEST_CASE("with eps = 0 the norm of a zero stream is zero") {
  const TokenGram zero{0.0, 0.0};
  const TokenGram out = normsim::theory::detail::normalized(zero, 1.0, 0.0);
  CHECK(out.diag == 0.0);
  CHECK(out.off == 0.0);
  CHECK(normsim::theory::detail::normalized({2.0, 1.0}, 1.0, 0.0).diag == 1.0);
  CHECK(std::isnan(normsim::theory::detail::normalized({std::nan(""), 0.0}, 1.0, 0.0).diag));
}
