// The decoder's cross-attention branch (issue 12) against an independent implementation: the test draws the
// same weights and encoder output from their Philox keys, writes the branch out in plain loops (per head
// softmax(Q K^T / sqrt(d_h)) V, no mask, K and V from the encoder output), and differentiates the loss
// <dout, F> by central differences in every entry of cq, ck, cv, co and of the input u. The branch's
// weight-gradient norms (gradw_cq ...) and dLoss/du must match. float64, h = 1e-6: truncation O(h^2) and
// rounding O(1e-16/h) are below 1e-8 on O(1) values; we allow 1e-6 absolute + 1e-6 relative.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "fd_norm.hpp"
#include "sim/cpu/cpu_branches.hpp"
#include "sim/draws.hpp"
#include "sim/encoder_output.hpp"
#include "sim/init.hpp"
#include "sim/rownorm.hpp"

using namespace normsim::sim;
using normsim::test::fd_norm;

namespace {

struct CrossWeights {
  Mat<double> q, k, v, o, enc;
};

// The loss <dout, F(u)> of the cross-attention written out directly.
double cross_loss(const CrossWeights& w, const Mat<double>& u, const Mat<double>& dout, int heads) {
  const int T = int(u.rows()), d = int(u.cols()), dh = d / heads, Te = int(w.enc.rows());
  const Mat<double> Q = u * w.q, K = w.enc * w.k, V = w.enc * w.v;
  Mat<double> O = Mat<double>::Zero(T, d);
  for (int h = 0; h < heads; ++h)
    for (int t = 0; t < T; ++t) {
      std::vector<double> p(Te);
      double mx = -1e300, sum = 0;
      for (int s = 0; s < Te; ++s) {
        double dot = 0;
        for (int j = 0; j < dh; ++j) dot += Q(t, h * dh + j) * K(s, h * dh + j);
        p[s] = dot / std::sqrt(double(dh));
        mx = std::max(mx, p[s]);
      }
      for (double& x : p) sum += (x = std::exp(x - mx));
      for (int s = 0; s < Te; ++s)
        for (int j = 0; j < dh; ++j) O(t, h * dh + j) += p[s] / sum * V(s, h * dh + j);
    }
  return (O * w.o).cwiseProduct(dout).sum();
}

}  // namespace

TEST_CASE("cross-attention weight gradients and input gradient match finite differences", "[backward]") {
  Config c;
  c.sublayer = normsim::vocab::Sublayer::decoder;
  c.placement = normsim::vocab::Placement::post;
  c.width = 8, c.heads = 2, c.tokens = 3, c.depth = 3, c.precision = normsim::vocab::Precision::float64,
  c.seed = 5;
  c.encoder_cos = 0.4;
  c.init_wq = c.init_wk = "fanin:2";  // sharp softmax: its backward carries weight
  const StackShape s(c);
  const Placement& p = find_placement(c.placement);
  const int k = 1;  // the cross-attention of the first decoder layer
  REQUIRE(s.branch(k) == BranchKind::cross_attention);
  const SampleKey key{c.seed, 0};
  auto draw = [&](WeightKind w) {
    Mat<double> m(s.fan_in(w), s.fan_out(w));
    fill_gaussian(m.data(), std::size_t(m.size()),
                  DrawKey{c.seed, 0, std::uint32_t(k), static_cast<Stream>(w)}, weight_std(s, p, k, w));
    return m;
  };
  CrossWeights w{draw(WeightKind::cq), draw(WeightKind::ck), draw(WeightKind::cv), draw(WeightKind::co),
                 Mat<double>(c.tokens, c.width)};
  Mat<double> e(c.tokens, c.width);
  for (int t = 0; t < c.tokens; ++t)
    for (int i = 0; i < c.width; ++i) e(t, i) = encoder_entry(c.seed, 0, t, i, c.width, c.encoder_cos);
  for (int t = 0; t < c.tokens; ++t)
    row_norm_forward(s.norm, e.data() + t * c.width, w.enc.data() + t * c.width, c.width, c.norm_gain,
                     c.norm_eps);

  Mat<double> u(c.tokens, c.width), dout(c.tokens, c.width);
  for (int i = 0; i < u.size(); ++i)
    u.data()[i] = std::sin(0.7 * i + 0.3), dout.data()[i] = std::cos(1.1 * i);
  auto branch = make_cpu_branch<double>(s, p, k, key, false);
  CpuWorkspace<double> ws;
  const Mat<double> F = branch->forward(u, ws);
  CHECK(F.cwiseProduct(dout).sum() == Approx(cross_loss(w, u, dout, c.heads)).epsilon(1e-12));
  WeightGradNorms norms;
  const Mat<double> du = branch->backward(u, dout, ws, norms);
  const auto loss = [&] { return cross_loss(w, u, dout, c.heads); };

  CHECK(norms[int(WeightKind::cq)] == Approx(fd_norm(w.q, loss)).margin(1e-6).epsilon(1e-6));
  CHECK(norms[int(WeightKind::ck)] == Approx(fd_norm(w.k, loss)).margin(1e-6).epsilon(1e-6));
  CHECK(norms[int(WeightKind::cv)] == Approx(fd_norm(w.v, loss)).margin(1e-6).epsilon(1e-6));
  CHECK(norms[int(WeightKind::co)] == Approx(fd_norm(w.o, loss)).margin(1e-6).epsilon(1e-6));
  for (WeightKind self : {WeightKind::wq, WeightKind::wk, WeightKind::wv, WeightKind::wo})
    CHECK(std::isnan(norms[int(self)]));  // gradw_wq ... stay the self-attention's
  Mat<double> du_fd(u.rows(), u.cols());
  fd_norm(u, loss, &du_fd);  // perturbs u itself: the loss reads it
  for (int i = 0; i < u.size(); ++i)
    CHECK(du.data()[i] == Approx(du_fd.data()[i]).margin(1e-6).epsilon(1e-6));
}
