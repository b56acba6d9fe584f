// The attention output gate (attention_gate, sim/attention_gate.hpp) against an independent implementation:
// the test draws the self-attention's weights from their Philox keys, writes the gated branch out in plain
// loops (per head softmax(Q K^T / sqrt(d_h)) V, then o[t,i] sigmoid((u W_g)[t, i / group]), then W_O, as
// qiuzh20/gated_attention modeling_qwen3.py:355-360 does), and differentiates the loss <dout, F> by central
// differences in every entry of wq, wk, wv, wo, wga and of the input u. The branch's weight-gradient norms
// (gradw_wga too) and dLoss/du must match. float64, h = 1e-6: truncation O(h^2) and rounding O(1e-16/h) are
// below 1e-8 on O(1) values; we allow 1e-6 absolute + 1e-6 relative, as the cross-attention's test.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "fd_norm.hpp"
#include "sim/attention_gate.hpp"
#include "sim/cpu/cpu_branches.hpp"
#include "sim/draws.hpp"
#include "sim/init.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;
using normsim::test::fd_norm;

namespace {

struct GatedWeights {
  Mat<double> q, k, v, o, g;
};

// The loss <dout, F(u)> of the gated self-attention written out directly; group coordinates per gate.
double gated_loss(const GatedWeights& w, const Mat<double>& u, const Mat<double>& dout, int heads, int group,
                  bool causal) {
  const int T = int(u.rows()), d = int(u.cols()), dh = d / heads;
  const Mat<double> Q = u * w.q, K = u * w.k, V = u * w.v, Z = u * w.g;
  Mat<double> O = Mat<double>::Zero(T, d);
  for (int h = 0; h < heads; ++h)
    for (int t = 0; t < T; ++t) {
      const int last = causal ? t : T - 1;
      std::vector<double> p(std::size_t(last) + 1);
      double mx = -1e300, sum = 0;
      for (int s = 0; s <= last; ++s) {
        double dot = 0;
        for (int j = 0; j < dh; ++j) dot += Q(t, h * dh + j) * K(s, h * dh + j);
        p[s] = dot / std::sqrt(double(dh));
        mx = std::max(mx, p[s]);
      }
      for (double& x : p) sum += (x = std::exp(x - mx));
      for (int s = 0; s <= last; ++s)
        for (int j = 0; j < dh; ++j) O(t, h * dh + j) += p[s] / sum * V(s, h * dh + j);
    }
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < d; ++i) O(t, i) *= 1.0 / (1.0 + std::exp(-Z(t, i / group)));
  return (O * w.o).cwiseProduct(dout).sum();
}

}  // namespace

TEST_CASE("the gate of one coordinate group follows its definition and its derivative", "[attention]") {
  const std::vector<double> o{0.3, -1.2, 2.0}, dy{1.1, 0.4, -0.7};
  for (const double z : {-2.5, 0.0, 0.8}) {
    std::vector<double> y(3), d_o(3);
    gate_forward_group(o.data(), y.data(), z, 3);
    const double s = 1.0 / (1.0 + std::exp(-z));
    for (int i = 0; i < 3; ++i) CHECK(y[i] == Approx(o[i] * s).epsilon(1e-15));
    const double dz = gate_backward_group(o.data(), dy.data(), d_o.data(), z, 3);
    const double h = 1e-6;
    const auto loss = [&](double zz) {
      std::vector<double> yy(3);
      gate_forward_group(o.data(), yy.data(), zz, 3);
      return dy[0] * yy[0] + dy[1] * yy[1] + dy[2] * yy[2];
    };
    CHECK(dz == Approx((loss(z + h) - loss(z - h)) / (2 * h)).margin(1e-9));
    for (int i = 0; i < 3; ++i) CHECK(d_o[i] == Approx(dy[i] * s).epsilon(1e-15));
  }
  CHECK(gate_group(normsim::vocab::AttentionGate::elementwise, 12, 3) == 1);
  CHECK(gate_group(normsim::vocab::AttentionGate::headwise, 12, 3) == 4);
  CHECK(gate_group(normsim::vocab::AttentionGate::none, 12, 3) == 0);
}

TEST_CASE("gated self-attention: weight gradients (W_g too) and input gradient match finite differences",
          "[backward]") {
  for (const std::string gate : {"elementwise", "headwise"})
    for (const bool causal : {false, true}) {
      Config c;
      c.sublayer = normsim::vocab::Sublayer::attention;
      c.placement = normsim::vocab::Placement::pre;
      c.width = 8, c.heads = 2, c.tokens = 3, c.depth = 2, c.precision = normsim::vocab::Precision::float64,
      c.seed = 7;
      c.causal = causal;
      c.attention_gate = normsim::vocab::parse<normsim::vocab::AttentionGate>(gate);
      c.init_wq = c.init_wk = "fanin:2";  // sharp softmax: its backward carries weight
      c.init_wga = "fanin:1.5";           // gates spread over (0, 1), far from a constant 1/2
      const StackShape s(c);
      const Placement& p = find_placement(c.placement);
      const int k = 1;
      const int group = gate_group(c.attention_gate, c.width, c.heads);
      REQUIRE(s.fan_out(WeightKind::wga) == c.width / group);
      auto draw = [&](WeightKind w) {
        Mat<double> m(s.fan_in(w), s.fan_out(w));
        fill_gaussian(m.data(), std::size_t(m.size()),
                      DrawKey{c.seed, 0, std::uint32_t(k), static_cast<Stream>(w)}, weight_std(s, p, k, w));
        return m;
      };
      GatedWeights w{draw(WeightKind::wq), draw(WeightKind::wk), draw(WeightKind::wv), draw(WeightKind::wo),
                     draw(WeightKind::wga)};
      Mat<double> u(c.tokens, c.width), dout(c.tokens, c.width);
      for (int i = 0; i < u.size(); ++i)
        u.data()[i] = std::sin(0.7 * i + 0.3), dout.data()[i] = std::cos(1.1 * i);
      auto branch = make_cpu_branch<double>(s, p, k, SampleKey{c.seed, 0}, false);
      CpuWorkspace<double> ws;
      const Mat<double> F = branch->forward(u, ws);
      const auto loss = [&] { return gated_loss(w, u, dout, c.heads, group, causal); };
      INFO(gate << " causal " << causal);
      CHECK(F.cwiseProduct(dout).sum() == Approx(loss()).epsilon(1e-12));
      WeightGradNorms norms;
      const Mat<double> du = branch->backward(u, dout, ws, norms);
      for (auto [kind, m] :
           {std::pair{WeightKind::wq, &w.q}, std::pair{WeightKind::wk, &w.k}, std::pair{WeightKind::wv, &w.v},
            std::pair{WeightKind::wo, &w.o}, std::pair{WeightKind::wga, &w.g}}) {
        INFO(weight_name(kind));
        CHECK(norms[int(kind)] == Approx(fd_norm(*m, loss)).margin(1e-6).epsilon(1e-6));
      }
      Mat<double> du_fd(u.rows(), u.cols());
      fd_norm(u, loss, &du_fd);
      for (int i = 0; i < u.size(); ++i)
        CHECK(du.data()[i] == Approx(du_fd.data()[i]).margin(1e-6).epsilon(1e-6));
    }
}

// Without a gate the attention reads no W_g (gradw_wga NaN) and keeps its weights list; with one, the
// sublayer lists wga after the four attention matrices, and the gate's std follows init_wq unless init_wga
// is set (the official gate is columns of q_proj, drawn with W_Q's init).
TEST_CASE("the gate matrix is listed, sized and initialized as attention_gate says", "[attention]") {
  Config c;
  c.sublayer = normsim::vocab::Sublayer::transformer;
  c.width = 12, c.heads = 3, c.depth = 4;
  const Placement& p = find_placement(c.placement);
  CHECK(StackShape(c).weights(0).size() == 4);
  c.attention_gate = normsim::vocab::AttentionGate::headwise;
  const StackShape s(c);
  CHECK(s.weights(0).back() == WeightKind::wga);
  CHECK(s.weights(1).size() == 2);  // the MLP has no attention gate
  CHECK(s.fan_in(WeightKind::wga) == 12);
  CHECK(s.fan_out(WeightKind::wga) == 3);
  CHECK(weight_std(s, p, 0, WeightKind::wga) == Approx(1.0 / std::sqrt(12.0)));
  c.init_wq = "fixed:0.02";
  CHECK(weight_std(StackShape(c), p, 0, WeightKind::wga) == Approx(0.02));
  c.init_wga = "fixed:0.5";
  CHECK(weight_std(StackShape(c), p, 0, WeightKind::wga) == Approx(0.5));
}
