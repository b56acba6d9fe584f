// The whole stack's backward pass against central finite differences in float64, for every placement,
// every sublayer kind (the decoder's too) and every activation: dLoss/dx_0 through all K sublayers and the
// final norm, so a wrong term in any op's backward shows up here. h = 1e-6: truncation O(h^2) and rounding
// O(1e-16/h) are both below 1e-8 on O(1) gradients; we allow 1e-6 absolute + 1e-5 relative.
#include <catch2/catch.hpp>
#include <cmath>
#include <memory>
#include <string>

#include "sim/cpu/cpu_tape_device.hpp"
#include "sim/cpu/frobenius.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/inputs.hpp"
#include "sim/stack_build.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;

namespace {

struct Run {
  double loss;
  Mat<double> grad_input;
};

Run run_stack(const Config& c, const Mat<double>& x0, PlacementState& state, bool want_grad) {
  const StackShape shape(c);
  const std::shared_ptr<const Placement> owned = placement_for(c);  // a built-in or the custom block
  const Placement& p = *owned;
  CpuTape<double> g(shape, p, SampleKey{c.seed, 0});
  const Value input = g.input(x0);
  const StackValues sv = build_stack(g, shape, p, input, &state);
  const Mat<double>& y = g.value(sv.output);
  Mat<double> dy(y.rows(), y.cols());
  for (int t = 0; t < y.rows(); ++t)
    for (int i = 0; i < y.cols(); ++i)
      dy(t, i) = c.loss == normsim::vocab::Loss::mse ? y(t, i) - target_entry(c.seed, 0, t, i, int(y.cols()))
                                                     : readout_entry(c.seed, 0, t, i, int(y.cols()));
  double loss = 0;
  for (int t = 0; t < y.rows(); ++t)
    for (int i = 0; i < y.cols(); ++i) {
      if (c.loss == normsim::vocab::Loss::mse) {
        const double r = y(t, i) - target_entry(c.seed, 0, t, i, int(y.cols()));
        loss += 0.5 * r * r;
      } else {
        loss += dy(t, i) * y(t, i);
      }
    }
  Run r{loss, {}};
  if (want_grad) {
    g.backward(sv.output, dy);
    r.grad_input = g.grad(input);
  }
  return r;
}

// Compares every entry of dLoss/dx_0; returns how many were compared.
int check_fd(const Config& c) {
  Mat<double> x0(c.tokens, c.width);
  for (int t = 0; t < c.tokens; ++t)
    for (int i = 0; i < c.width; ++i) x0(t, i) = input_entry(c.seed, 0, t, i, c.width, 1.0, 0.2);
  PlacementState state;
  const Run base = run_stack(c, x0, state, true);
  state.replay = true;  // Admin's omega is a constant of the backward pass: hold it fixed here too
  const double h = 1e-6;
  for (int t = 0; t < c.tokens; ++t)
    for (int i = 0; i < c.width; ++i) {
      Mat<double> xp = x0, xm = x0;
      xp(t, i) += h;
      xm(t, i) -= h;
      const double fd = (run_stack(c, xp, state, false).loss - run_stack(c, xm, state, false).loss) / (2 * h);
      INFO(c.sublayer << " " << c.placement << " " << c.activation << " loss " << c.loss << " entry " << t
                      << "," << i);
      REQUIRE(base.grad_input(t, i) == Approx(fd).margin(1e-6).epsilon(1e-5));
    }
  return c.tokens * c.width;
}

Config small(const std::string& sub, const std::string& placement) {
  Config c;
  c.sublayer = normsim::vocab::parse<normsim::vocab::Sublayer>(sub);
  c.placement = normsim::vocab::parse<normsim::vocab::Placement>(placement);
  c.width = 8;
  c.heads = 2;
  c.tokens = 3;
  c.depth = 4;
  c.mlp_ratio = 2;
  c.precision = normsim::vocab::Precision::float64;
  c.seed = 3;
  c.mix_fraction = 0.5;
  c.rezero_alpha = 0.4;
  c.spannorm_lambda = 0.8;
  return c;
}

}  // namespace

TEST_CASE("stack backward matches finite differences for every placement and sublayer", "[backward]") {
  for (const std::string sub : {"mlp", "attention", "transformer"})
    for (const std::string p : {"post", "pre", "peri", "mix", "b2t", "deepnorm", "lnscale", "admin", "rezero",
                                "spannorm", "hybridnorm", "hybridnorm_star", "none"}) {
      Config c = small(sub, p);
      c.activation =
          normsim::vocab::Activation::gelu;  // smooth, so no kink sits within h of a pre-activation
      c.causal = (sub == "attention");
      c.input_norm = (p == "peri");
      c.norm_gain = (p == "hybridnorm" || p == "hybridnorm_star" || p == "peri") ? 1.3 : 1.0;
      CHECK(check_fd(c) == c.tokens * c.width);
    }
}

// The decoder (issue 12): self-attention, cross-attention to the fixed encoder output, MLP. The gradient
// reaches x_0 through the cross-attention's queries only; B2T's and SpanNorm's unit is the decoder layer.
TEST_CASE("decoder stack backward matches finite differences for every placement", "[backward]") {
  for (const std::string p : {"post", "pre", "peri", "mix", "b2t", "deepnorm", "lnscale", "admin", "rezero",
                              "spannorm", "hybridnorm", "hybridnorm_star", "none", "olmo2"}) {
    Config c = small("decoder", p);
    c.depth = 6;
    c.activation = normsim::vocab::Activation::gelu;
    c.causal = true;
    c.encoder_cos = 0.3;
    c.init_wq = c.init_wk = "fanin:2";  // sharp attention: the softmax and query paths carry weight
    c.norm_gain = (p == "hybridnorm" || p == "hybridnorm_star") ? 1.3 : 1.0;
    CHECK(check_fd(c) == c.tokens * c.width);
  }
}

TEST_CASE("stack backward matches finite differences for every activation, norm and loss", "[backward]") {
  for (const std::string act : {"relu", "gelu", "silu", "tanh", "linear", "swiglu"})
    for (const std::string norm : {"layernorm", "rmsnorm"}) {
      Config c = small("mlp", "pre");
      c.activation = normsim::vocab::parse<normsim::vocab::Activation>(act);
      c.norm = normsim::vocab::parse<normsim::vocab::Norm>(norm);
      c.norm_eps = 1e-3;
      c.loss = norm == "rmsnorm" ? normsim::vocab::Loss::mse : normsim::vocab::Loss::readout;
      CHECK(check_fd(c) == c.tokens * c.width);
    }
}

TEST_CASE("stack backward with qk_norm matches finite differences", "[backward][qk_norm]") {
  for (const auto scope : {normsim::vocab::QkNormScope::head, normsim::vocab::QkNormScope::projection})
    for (const std::string sub : {"attention", "transformer"})
      for (const std::string norm : {"layernorm", "rmsnorm"})
        for (const std::string p : {"pre", "post", "b2t", "none"}) {
          Config c = small(sub, p);
          c.qk_norm_scope = scope;
          c.activation = normsim::vocab::Activation::gelu;
          c.norm = normsim::vocab::parse<normsim::vocab::Norm>(norm);
          c.qk_norm = true;
          c.causal = (p == "pre");
          c.norm_gain = 1.3;
          c.norm_eps = 1e-3;
          CHECK(check_fd(c) == c.tokens * c.width);
        }
}

TEST_CASE("weight-gradient norms by the Gram identity equal the direct product", "[backward]") {
  Mat<double> a(5, 7), b(5, 3);
  for (int i = 0; i < a.size(); ++i) a.data()[i] = std::sin(1.3 * i);
  for (int i = 0; i < b.size(); ++i) b.data()[i] = std::cos(0.7 * i + 0.1);
  const double direct = (a.transpose() * b).norm();
  CHECK(frobenius_of_AtB<double>(a, b) == Approx(direct).epsilon(1e-12));
  Mat<double> tall_a(40, 3), tall_b(40, 2);  // the other branch of the cost rule
  for (int i = 0; i < tall_a.size(); ++i) tall_a.data()[i] = std::sin(0.37 * i);
  for (int i = 0; i < tall_b.size(); ++i) tall_b.data()[i] = std::cos(0.23 * i);
  CHECK(frobenius_of_AtB<double>(tall_a, tall_b) ==
        Approx((tall_a.transpose() * tall_b).norm()).epsilon(1e-12));
}

// DyT and Derf in every site (branch input, branch output, the stream after the add, the final norm, the
// decoder's encoder output) with alphas that differ by sublayer kind and from the final one, and Derf's
// shift: a norm given the wrong site's alpha, or a backward reading y for x, shows up here.
// emb (the stack's input x_0) read at every unit: its gradient reaches x_0 along every skip and the chain.
TEST_CASE("stack backward matches finite differences for blocks that read emb", "[backward][emb]") {
  for (const std::string sub : {"mlp", "transformer"})
    for (const char* block : {"1.15 * x + 0.2 * emb + F(N(1.15 * x + 0.2 * emb))", "N(x + F(x) + 0.5 * emb)",
                              "x + F(N(x)); x0 + emb + F(N(x))"}) {
      Config c = small(sub, "custom");
      c.activation = normsim::vocab::Activation::gelu;
      c.block = block;
      INFO(block);
      CHECK(check_fd(c) == c.tokens * c.width);
    }
}

TEST_CASE("stack backward matches finite differences with DyT and Derf in every site", "[backward][dyt]") {
  for (const std::string norm : {"dyt", "derf"})
    for (const std::string sub : {"transformer", "decoder"})
      for (const std::string p : {"pre", "post", "peri", "olmo2"}) {
        Config c = small(sub, p);
        if (sub == "decoder") c.depth = 6, c.encoder_cos = 0.3;
        c.norm = normsim::vocab::parse<normsim::vocab::Norm>(norm);
        c.norm_alpha = "attention ? 0.8 : 0.3 + 0.1 * k";
        c.norm_shift = norm == "derf" ? "0.1 * k - 0.2" : "0";
        c.final_norm_alpha = 0.6, c.final_norm_shift = norm == "derf" ? 0.15 : 0.0;
        c.final_norm = normsim::vocab::FinalNorm::always;
        c.activation = normsim::vocab::Activation::gelu;
        c.norm_gain = 1.2;
        INFO(norm << " " << sub << " " << p);
        CHECK(check_fd(c) == c.tokens * c.width);
      }
}

// Which alpha each norm takes: a block N(x) + 0 F(x) makes x_{k+1} = gain tanh(alpha_k x_k) exactly, so the
// stream shows every sublayer's alpha (attention's 0.8, the MLP's 0.3) and y the final norm's 0.6.
TEST_CASE("DyT's norms take norm_alpha at their sublayer and the final norm final_norm_alpha", "[dyt]") {
  Config c = small("transformer", "custom");
  c.block = std::string("N(x) + 0 * F(x)");
  c.norm = normsim::vocab::Norm::dyt;
  c.norm_alpha = "attention ? 0.8 : 0.3";
  c.final_norm_alpha = 0.6;
  c.final_norm = normsim::vocab::FinalNorm::always;
  c.norm_gain = 1.2;
  const StackShape shape(c);
  const auto placement = placement_for(c);
  CpuTape<double> g(shape, *placement, SampleKey{c.seed, 0});
  Mat<double> x0(c.tokens, c.width);
  for (int t = 0; t < c.tokens; ++t)
    for (int i = 0; i < c.width; ++i) x0(t, i) = input_entry(c.seed, 0, t, i, c.width, 2.0, 0.2);
  const StackValues sv = build_stack(g, shape, *placement, g.input(x0));
  const auto dyt = [&](const Mat<double>& x, double alpha) {
    return Mat<double>(x.unaryExpr([&](double v) { return 1.2 * std::tanh(alpha * v); }));
  };
  for (int k = 0; k < c.depth; ++k)
    CHECK(g.value(sv.stream[k + 1]).isApprox(dyt(g.value(sv.stream[k]), k % 2 == 0 ? 0.8 : 0.3), 1e-15));
  CHECK(g.value(sv.output).isApprox(dyt(g.value(sv.stream.back()), 0.6), 1e-15));
}

// The logits' scale (sim/head_norms.hpp): muP's 1/d_h and a temperature, forward and backward, with sharp
// attention (init gain 2 on W_Q and W_K, so the softmax is far from uniform and its backward carries weight).
TEST_CASE("stack backward matches finite differences under muP logits and a temperature", "[backward]") {
  for (const std::string scaling : {"sqrt", "mup"})
    for (const double temperature : {0.5, 3.0}) {
      Config c = small("transformer", "pre");
      c.logit_scaling = normsim::vocab::parse<normsim::vocab::LogitScaling>(scaling);
      c.attention_temperature = temperature;
      c.init_wq = c.init_wk = "fanin:2";
      c.activation = normsim::vocab::Activation::gelu;
      INFO(scaling << " temperature " << temperature);
      CHECK(check_fd(c) == c.tokens * c.width);
    }
}

// muP's 1/d_h at temperature t is the standard 1/sqrt(d_h) at temperature t sqrt(d_h): the same logits up
// to the rounding of the scale (one ulp of a double, amplified by a few sublayers of O(1) condition).
TEST_CASE("muP's logit scaling is the standard one at temperature sqrt(d_h)", "[attention]") {
  Config mup = small("attention", "pre");
  mup.logit_scaling = normsim::vocab::LogitScaling::mup;
  mup.attention_temperature = 0.7;
  mup.init_wq = mup.init_wk = "fanin:2";
  Config standard = mup;
  standard.logit_scaling = normsim::vocab::LogitScaling::sqrt;
  standard.attention_temperature = 0.7 * std::sqrt(double(mup.width / mup.heads));
  Mat<double> x0(mup.tokens, mup.width);
  for (int t = 0; t < mup.tokens; ++t)
    for (int i = 0; i < mup.width; ++i) x0(t, i) = input_entry(mup.seed, 0, t, i, mup.width, 1.0, 0.2);
  PlacementState a, b;
  const Run m = run_stack(mup, x0, a, true), s = run_stack(standard, x0, b, true);
  CHECK(m.loss == Approx(s.loss).epsilon(1e-13));
  CHECK(m.grad_input.isApprox(s.grad_input, 1e-12));
  standard.attention_temperature = 0.7;  // and the two rules do differ
  PlacementState c;
  CHECK(std::abs(run_stack(standard, x0, c, false).loss - m.loss) > 1e-3 * std::abs(m.loss));
}

// The attention output gate (attention_gate) in whole stacks: elementwise and headwise, in a Pre-LN and a
// Post-LN transformer and in a causal decoder (whose cross-attention has no gate), the gate's W_g at init
// gain 1.5 so that the gates spread over (0, 1).
TEST_CASE("stack backward matches finite differences with an attention output gate", "[backward]") {
  for (const std::string gate : {"elementwise", "headwise"})
    for (const std::string sub : {"transformer", "decoder"})
      for (const std::string p : {"pre", "post"}) {
        Config c = small(sub, p);
        if (sub == "decoder") c.depth = 6, c.causal = true;
        c.attention_gate = normsim::vocab::parse<normsim::vocab::AttentionGate>(gate);
        c.init_wq = c.init_wk = "fanin:2";
        c.init_wga = "fanin:1.5";
        c.activation = normsim::vocab::Activation::gelu;
        INFO(gate << " " << sub << " " << p);
        CHECK(check_fd(c) == c.tokens * c.width);
      }
}

// A routed MLP (moe_experts > 0, sim/cpu/cpu_moe.cpp): through the experts, the gates and the router. The
// top-k selection is held fixed by the backward; these seeds put no pair of router logits within the step's
// reach of a tie (a selection that flipped between x + h and x - h would show as an O(1/h) difference here).
TEST_CASE("routed MLP backward matches finite differences", "[backward][moe]") {
  for (const std::string gate : {"renormalized", "softmax"})
    for (const std::string sub : {"mlp", "transformer"})
      for (const std::string act : {"gelu", "swiglu"})
        for (const int top_k : {1, 2, 4}) {
          Config c = small(sub, sub == "mlp" ? "pre" : "post");
          c.activation = normsim::vocab::parse<normsim::vocab::Activation>(act);
          c.moe_experts = 4;
          c.moe_top_k = top_k;
          c.moe_gate = normsim::vocab::parse<normsim::vocab::MoeGate>(gate);
          c.init_wrouter = "fanin:2";  // spread gates: the router's path carries weight
          INFO(gate << " " << sub << " " << act << " k " << top_k);
          CHECK(check_fd(c) == c.tokens * c.width);
        }
}

// Expert 0 draws the dense MLP's weights (WeightId{kind, 0} is the kind's own key) and with one expert the
// gate is exactly 1: the routed MLP is then the dense MLP, bit for bit, forward and backward.
TEST_CASE("a routed MLP of one expert is the dense MLP bit for bit", "[backward][moe]") {
  for (const std::string sub : {"mlp", "transformer"})
    for (const std::string gate : {"renormalized", "softmax"}) {
      Config dense = small(sub, "pre");
      dense.activation = normsim::vocab::Activation::swiglu;
      Config moe = dense;
      moe.moe_experts = 1;
      moe.moe_top_k = 1;
      moe.moe_gate = normsim::vocab::parse<normsim::vocab::MoeGate>(gate);
      Mat<double> x0(dense.tokens, dense.width);
      for (int t = 0; t < dense.tokens; ++t)
        for (int i = 0; i < dense.width; ++i) x0(t, i) = input_entry(3, 0, t, i, dense.width, 1.0, 0.2);
      PlacementState s1, s2;
      const Run a = run_stack(dense, x0, s1, true), b = run_stack(moe, x0, s2, true);
      CHECK(a.loss == b.loss);
      CHECK(a.grad_input == b.grad_input);
    }
}

// Biases on every matrix (bias = true, sim/init.hpp): drawn at init_bias = 0.5 so that they move every
// pre-activation, through every branch kind (MLP with GELU and SwiGLU, attention with an output gate, the
// decoder's cross-attention, a routed MLP's experts) and a Pre-LN and a Post-LN stack.
TEST_CASE("stack backward matches finite differences with biases on every matrix", "[backward][bias]") {
  for (const std::string sub : {"mlp", "attention", "transformer", "decoder"})
    for (const std::string p : {"pre", "post"})
      for (const std::string act : {"gelu", "swiglu"}) {
        Config c = small(sub, p);
        if (sub == "decoder") c.depth = 6, c.causal = true;
        c.activation = normsim::vocab::parse<normsim::vocab::Activation>(act);
        c.bias = true;
        c.init_bias = 0.5;
        c.init_wq = c.init_wk = "fanin:2";
        if (sub == "transformer") c.attention_gate = normsim::vocab::AttentionGate::elementwise;
        if (sub == "mlp" && act == "gelu") c.moe_experts = 4, c.init_wrouter = "fanin:2";
        INFO("bias: " << sub << " " << p << " " << act);
        CHECK(check_fd(c) == c.tokens * c.width);
      }
}

// Zero biases (init_bias = 0, nanoGPT's init) leave the stack as it was, bit for bit; drawn ones move it.
TEST_CASE("zero biases are the bias-free stack bit for bit, drawn ones change it", "[backward][bias]") {
  for (const std::string sub : {"mlp", "transformer", "decoder"}) {
    Config plain = small(sub, "pre");
    if (sub == "decoder") plain.depth = 6;
    Config zero = plain;
    zero.bias = true;
    Config drawn = zero;
    drawn.init_bias = 0.5;
    Mat<double> x0(plain.tokens, plain.width);
    for (int t = 0; t < plain.tokens; ++t)
      for (int i = 0; i < plain.width; ++i) x0(t, i) = input_entry(3, 0, t, i, plain.width, 1.0, 0.2);
    PlacementState s1, s2, s3;
    const Run a = run_stack(plain, x0, s1, true), b = run_stack(zero, x0, s2, true);
    CHECK(a.loss == b.loss);
    CHECK(a.grad_input == b.grad_input);
    CHECK(std::abs(run_stack(drawn, x0, s3, false).loss - a.loss) > 1e-3 * std::abs(a.loss));
  }
}
