// Every placement's forward pass against an independent hand computation at small width: plain loops over
// the same Philox weights, each placement re-written from its equation in docs/conventions.md. Both run in
// float64, so they agree to rounding (1e-9 relative is far above rounding, far below any wrong term).
#include <catch2/catch.hpp>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "sim/cpu/cpu_backend.hpp"
#include "sim/draws.hpp"
#include "sim/inputs.hpp"
#include "sim/sample_metrics.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;
using M = std::vector<std::vector<double>>;  // rows

namespace {

struct Ref {
  Config c;
  int d, T, H;

  M zeros(int r, int cols) const { return M(r, std::vector<double>(cols, 0.0)); }
  // The weights are the forward pass's data: drawn by the same fill as the backend (test_philox.cpp
  // checks the draws themselves); everything after the draw is recomputed here by hand.
  M weight(int k, Stream s, int fin, int fout, double std) const {
    std::vector<double> flat(std::size_t(fin) * fout);
    fill_gaussian(flat.data(), flat.size(), DrawKey{c.seed, 0, std::uint32_t(k), s}, std);
    M w = zeros(fin, fout);
    for (int i = 0; i < fin; ++i)
      for (int j = 0; j < fout; ++j) w[i][j] = flat[std::size_t(i) * fout + j];
    return w;
  }
  static M matmul(const M& a, const M& b) {
    M r(a.size(), std::vector<double>(b[0].size(), 0.0));
    for (std::size_t i = 0; i < a.size(); ++i)
      for (std::size_t k = 0; k < b.size(); ++k)
        for (std::size_t j = 0; j < b[0].size(); ++j) r[i][j] += a[i][k] * b[k][j];
    return r;
  }
  static M add(const M& a, const M& b) {
    M r = a;
    for (std::size_t i = 0; i < a.size(); ++i)
      for (std::size_t j = 0; j < a[0].size(); ++j) r[i][j] += b[i][j];
    return r;
  }
  static M scale(const M& a, double s) {
    M r = a;
    for (auto& row : r)
      for (double& v : row) v *= s;
    return r;
  }
  M norm(const M& x) const {
    M r = x;
    for (auto& row : r) {
      double mean = 0, var = 0;
      if (c.norm == normsim::vocab::Norm::layernorm)
        for (double v : row) mean += v / row.size();
      for (double v : row) var += (v - mean) * (v - mean) / row.size();
      for (double& v : row) v = c.norm_gain * (v - mean) / std::sqrt(var + c.norm_eps);
    }
    return r;
  }
  double mean_sq(const M& x) const {
    double s = 0;
    for (auto& row : x)
      for (double v : row) s += v * v;
    return s / (x.size() * x[0].size());
  }
  // fan-in std x beta (DeepNorm's, where the caller passes it) x B2T's rescaling of every weight,
  // (K/2)^(-1/2) (takase/b2t_connection's rescaling_init).
  double std_of(int fin, double beta) const {
    const bool b2t = c.placement == normsim::vocab::Placement::b2t && c.placement_init;
    return beta * (b2t ? 1 / std::sqrt(c.depth / 2.0) : 1.0) / std::sqrt(double(fin));
  }
  M mlp(int k, const M& u, double beta) const {
    const int h = int(std::lround(c.mlp_ratio * d));
    M a = matmul(u, weight(k, Stream::w1, d, h, std_of(d, beta)));
    for (auto& row : a)
      for (double& v : row) v = v > 0 ? v : 0;  // relu
    return matmul(a, weight(k, Stream::w2, h, d, std_of(h, beta)));
  }
  M attention(int k, const M& u, bool qkv_norm, double beta) const {
    M q = matmul(u, weight(k, Stream::wq, d, d, std_of(d, 1))),
      kk = matmul(u, weight(k, Stream::wk, d, d, std_of(d, 1)));
    M v = matmul(u, weight(k, Stream::wv, d, d, std_of(d, beta)));
    const int dh = d / H;
    // Norms of Q, K (, V): QKV-norm (RMS of Q, K, V per head), else qk_norm (the configured norm of Q and K,
    // per head or, qk_norm_scope = "projection", over the whole row as OLMo-2).
    const bool qk = qkv_norm || c.qk_norm;
    const bool ln = !qkv_norm && c.norm == normsim::vocab::Norm::layernorm;
    const bool whole = !qkv_norm && c.qk_norm_scope == normsim::vocab::QkNormScope::projection;
    for (M* m : {&q, &kk, &v}) {
      if (!(m == &v ? qkv_norm : qk)) continue;
      const int slices = whole && m != &v ? 1 : H, n = d / slices;
      for (auto& row : *m)
        for (int h = 0; h < slices; ++h) {
          double mean = 0, ms = 0;
          for (int i = 0; i < n && ln; ++i) mean += row[h * n + i] / n;
          for (int i = 0; i < n; ++i) ms += (row[h * n + i] - mean) * (row[h * n + i] - mean) / n;
          for (int i = 0; i < n; ++i)
            row[h * n + i] = (row[h * n + i] - mean) * c.norm_gain / std::sqrt(ms + c.norm_eps);
        }
    }
    M o = zeros(T, d);
    for (int h = 0; h < H; ++h)
      for (int t = 0; t < T; ++t) {
        std::vector<double> p(T, 0.0);
        double mx = -1e300, sum = 0;
        const int last = c.causal ? t : T - 1;
        for (int s = 0; s <= last; ++s) {
          double dot = 0;
          for (int i = 0; i < dh; ++i) dot += q[t][h * dh + i] * kk[s][h * dh + i];
          p[s] = dot / std::sqrt(double(dh));
          mx = std::max(mx, p[s]);
        }
        for (int s = 0; s <= last; ++s) sum += (p[s] = std::exp(p[s] - mx));
        for (int s = 0; s <= last; ++s)
          for (int i = 0; i < dh; ++i) o[t][h * dh + i] += p[s] / sum * v[s][h * dh + i];
      }
    return matmul(o, weight(k, Stream::wo, d, d, std_of(d, beta)));
  }
  M branch(int k, const M& u, bool qkv = false, double beta = 1) const {
    const bool attn = c.sublayer == normsim::vocab::Sublayer::attention ||
                      (c.sublayer == normsim::vocab::Sublayer::transformer && k % 2 == 0);
    return attn ? attention(k, u, qkv, beta) : mlp(k, u, beta);
  }
  int block(int k) const { return c.sublayer == normsim::vocab::Sublayer::transformer ? k / 2 : k; }

  std::vector<M> run() const {
    M x = zeros(T, d);
    for (int t = 0; t < T; ++t)
      for (int i = 0; i < d; ++i) x[t][i] = input_entry(c.seed, 0, t, i, d, c.input_std, c.input_corr);
    std::vector<M> s{x};
    const int K = c.depth, L = c.sublayer == normsim::vocab::Sublayer::transformer ? K / 2 : K;
    const double alpha = std::pow(double(K), 0.25), beta = std::pow(4.0 * K, -0.25);
    double omega2 = 1;
    M bottom;
    for (int k = 0; k < K; ++k) {
      const std::string p(normsim::vocab::name(c.placement));
      if (p == "post" || (p == "mix" && block(k) < int(std::floor(c.mix_fraction * L))))
        x = norm(add(x, branch(k, x)));
      else if (p == "pre" || p == "mix")
        x = add(x, branch(k, norm(x)));
      else if (p == "peri")
        x = add(x, norm(branch(k, norm(x))));
      else if (p == "b2t") {
        if (k % 2 == 0)
          bottom = x, x = norm(add(x, branch(k, x)));
        else
          x = norm(add(add(x, branch(k, x)), bottom));
      } else if (p == "deepnorm")
        x = norm(add(scale(x, alpha), branch(k, x, false, beta)));
      else if (p == "lnscale")
        x = add(x, branch(k, scale(norm(x), 1 / std::sqrt(double(block(k) + 1)))));
      else if (p == "admin") {
        const M f = branch(k, x);
        x = norm(add(scale(x, std::sqrt(omega2)), f));
        omega2 += mean_sq(f);
      } else if (p == "rezero")
        x = add(x, scale(branch(k, x), c.rezero_alpha));
      else if (p == "spannorm") {
        x = add(x, scale(branch(k, norm(x)), c.spannorm_lambda));
        if (k % 2 == 1) x = norm(x);
      } else if (p == "hybridnorm" || p == "hybridnorm_star") {
        const bool attn = c.sublayer == normsim::vocab::Sublayer::attention ||
                          (c.sublayer == normsim::vocab::Sublayer::transformer && k % 2 == 0);
        if (p == "hybridnorm_star" && block(k) == 0)  // Pre-Norm first block, QKV-norm kept
          x = add(x, branch(k, norm(x), true));
        else if (attn)
          x = add(x, branch(k, x, true));
        else
          x = add(norm(x), branch(k, norm(x)));
      } else if (p == "none")
        x = add(x, branch(k, x));
      else
        FAIL("placement without a hand computation: " << p);
      s.push_back(x);
    }
    return s;
  }
};

}  // namespace

TEST_CASE("every placement's forward equals the hand computation", "[forward]") {
  for (const std::string sub : {"mlp", "attention", "transformer"})
    for (const std::string p : {"post", "pre", "peri", "mix", "b2t", "deepnorm", "lnscale", "admin", "rezero",
                                "spannorm", "hybridnorm", "hybridnorm_star", "none"}) {
      Config c;
      c.placement = normsim::vocab::parse<normsim::vocab::Placement>(p);
      c.sublayer = normsim::vocab::parse<normsim::vocab::Sublayer>(sub);
      c.width = 6;
      c.heads = 2;
      c.tokens = 3;
      c.depth = 4;
      c.mlp_ratio = 2;
      c.precision = normsim::vocab::Precision::float64;
      c.seed = 11;
      c.mix_fraction = 0.5;
      c.rezero_alpha = 0.3;
      c.spannorm_lambda = 0.7;
      c.causal = (p == "pre");  // exercise the causal mask once per sublayer kind
      c.norm = (p == "peri") ? normsim::vocab::Norm::rmsnorm : normsim::vocab::Norm::layernorm;
      // gains reach every norm, QKV norms too
      c.norm_gain = (p == "hybridnorm" || p == "hybridnorm_star" || p == "peri") ? 1.3 : 1.0;
      const Ref ref{c, c.width, c.tokens, c.heads};
      const std::vector<M> want = ref.run();
      const SampleTensors got = simulate_sample_cpu<double>(c, 0);
      REQUIRE(got.stream.size() == want.size());
      for (std::size_t l = 0; l < want.size(); ++l)
        for (int t = 0; t < c.tokens; ++t)
          for (int i = 0; i < c.width; ++i) {
            INFO(sub << " " << p << " layer " << l << " token " << t << " coord " << i);
            REQUIRE(got.stream[l](t, i) == Approx(want[l][t][i]).epsilon(1e-9).margin(1e-12));
          }
    }
}

TEST_CASE(
    "qk_norm: every placement's attention normalizes Q and K per head or whole, as the hand computation",
    "[forward]") {
  for (const auto scope : {normsim::vocab::QkNormScope::head, normsim::vocab::QkNormScope::projection})
    for (const std::string sub : {"attention", "transformer"})
      for (const std::string norm : {"layernorm", "rmsnorm"})
        for (const std::string p : {"pre", "post", "b2t", "hybridnorm", "hybridnorm_star", "none"}) {
          Config c;
          c.qk_norm_scope = scope;
          c.placement = normsim::vocab::parse<normsim::vocab::Placement>(p);
          c.sublayer = normsim::vocab::parse<normsim::vocab::Sublayer>(sub);
          c.norm = normsim::vocab::parse<normsim::vocab::Norm>(norm);
          c.qk_norm = true;
          c.width = 8, c.heads = 2, c.tokens = 3, c.depth = 4, c.mlp_ratio = 2, c.seed = 5;
          c.precision = normsim::vocab::Precision::float64;
          c.norm_gain = 1.3;
          c.input_std = 3.0;  // logits of O(10) without the norm: the norm visibly changes the attention
          const std::vector<M> want = Ref{c, c.width, c.tokens, c.heads}.run();
          const SampleTensors got = simulate_sample_cpu<double>(c, 0);
          c.qk_norm = false;
          const SampleTensors plain = simulate_sample_cpu<double>(c, 0);
          REQUIRE(got.stream.size() == want.size());
          double changed = 0;
          for (std::size_t l = 0; l < want.size(); ++l)
            for (int t = 0; t < c.tokens; ++t)
              for (int i = 0; i < c.width; ++i) {
                INFO(sub << " " << norm << " " << p << " layer " << l << " token " << t << " coord " << i);
                REQUIRE(got.stream[l](t, i) == Approx(want[l][t][i]).epsilon(1e-9).margin(1e-12));
                changed = std::max(changed, std::abs(got.stream[l](t, i) - plain.stream[l](t, i)));
              }
          INFO(sub << " " << norm << " " << p);
          if (p == "hybridnorm" || p == "hybridnorm_star")
            CHECK(changed == 0);  // its every attention is Fqkv: Q and K are normalized already
          else
            CHECK(changed > 1e-3);
          if (scope == normsim::vocab::QkNormScope::head || p == "hybridnorm" || p == "hybridnorm_star")
            continue;
          // The whole row's norm is not the heads' norms: the two scopes give different streams.
          c.qk_norm = true;
          c.qk_norm_scope = normsim::vocab::QkNormScope::head;
          const SampleTensors per_head = simulate_sample_cpu<double>(c, 0);
          CHECK((got.stream.back() - per_head.stream.back()).cwiseAbs().maxCoeff() > 1e-3);
        }
}
