// qk_norm's effect on the logits, against its closed form. Q = u Wq and K = u Wk, Wq and Wk fan-in
// (variance 1/d), u rows of per-coordinate second moment v. For tokens s != t:
//   without the norm  E[logit^2] = E[|u_t|^2 |u_s|^2] / d^2 = v^2                   (grows with the stream)
//   RMSNorm, gain g   E[logit^2] = g^4           (q_h, k_h independent and isotropic: E[cos^2] = 1/d_h)
//   LayerNorm         E[logit^2] = g^4 d_h / (d_h - 1)   (isotropic in the d_h - 1 dims orthogonal to 1)
// with eps = 0. The sample is 64 independent draws of (u, Wq, Wk); the per-draw mean of logit^2 over heads
// and token pairs is one observation, so the standard error comes from 64 independent numbers and the
// check is |mean - closed form| <= 4 se (fixed seeds: deterministic; a false failure would be a 4-sigma
// event).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sim/cpu/cpu_heads.hpp"
#include "sim/draws.hpp"

using namespace normsim::sim;

namespace {

struct Moment {
  double mean, se;
};

Moment logit_sq(bool qk_norm, NormKind kind, double v, double gain) {
  const int T = 6, d = 48, heads = 4, dh = d / heads, draws = 64;
  std::vector<double> per_draw;
  for (int r = 0; r < draws; ++r) {
    Mat<double> u(T, d), wq(d, d), wk(d, d);
    fill_gaussian(u.data(), std::size_t(u.size()), DrawKey{11, std::uint32_t(r), 0, Stream::input_tokens},
                  std::sqrt(v));
    fill_gaussian(wq.data(), std::size_t(wq.size()), DrawKey{11, std::uint32_t(r), 0, Stream::wq},
                  1 / std::sqrt(double(d)));
    fill_gaussian(wk.data(), std::size_t(wk.size()), DrawKey{11, std::uint32_t(r), 0, Stream::wk},
                  1 / std::sqrt(double(d)));
    Mat<double> q = u * wq, k = u * wk;
    if (qk_norm) {
      std::vector<double> rstd;
      Mat<double> qn, kn;
      head_norm_forward(kind, q, qn, rstd, heads, gain, 0.0);
      head_norm_forward(kind, k, kn, rstd, heads, gain, 0.0);
      q = qn, k = kn;
    }
    double sum = 0;
    int n = 0;
    for (int h = 0; h < heads; ++h) {
      const Mat<double> logits = head_logits(q, k, h, dh, 1.0 / std::sqrt(double(dh)));
      for (int t = 0; t < T; ++t)
        for (int s = 0; s < T; ++s)
          if (s != t) sum += logits(t, s) * logits(t, s), ++n;
    }
    per_draw.push_back(sum / n);
  }
  double mean = 0, var = 0;
  for (double x : per_draw) mean += x / draws;
  for (double x : per_draw) var += (x - mean) * (x - mean) / (draws - 1);
  return {mean, std::sqrt(var / draws)};
}

}  // namespace

TEST_CASE("qk_norm fixes the logits' second moment at gain^4 whatever the stream's scale", "[qk_norm]") {
  const double dh = 12, gain = 1.3;
  for (const double v : {1.0, 4.0}) {
    const Moment plain = logit_sq(false, NormKind::rmsnorm, v, gain);
    const Moment rms = logit_sq(true, NormKind::rmsnorm, v, gain);
    const Moment ln = logit_sq(true, NormKind::layernorm, v, gain);
    INFO("v " << v << ": plain " << plain.mean << " +- " << plain.se << ", rms " << rms.mean << " +- "
              << rms.se << ", ln " << ln.mean << " +- " << ln.se);
    CHECK(std::abs(plain.mean - v * v) <= 4 * plain.se);
    CHECK(std::abs(rms.mean - std::pow(gain, 4)) <= 4 * rms.se);
    CHECK(std::abs(ln.mean - std::pow(gain, 4) * dh / (dh - 1)) <= 4 * ln.se);
  }
}
