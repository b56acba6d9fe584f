// Closed-form summaries against theory.md's printed numbers (§2.2, §3(b)).
#include "theory/summaries.hpp"

#include <catch2/catch.hpp>
#include <cmath>

#include "theory/gaussian_moments.hpp"

using namespace normsim::theory;

TEST_CASE("Su's effective-depth table (theory.md §3(b))") {
  const SuRow pre = su_preln(0.0, 0.5, 8, 8, 16);
  CHECK(pre.norm_sq == Approx(4.0));
  CHECK(pre.cos_next == Approx(std::sqrt(8.0 / 9)));
  CHECK(pre.cos_m == Approx(std::sqrt(0.5)));  // t >= T/2 sits within 45 degrees of the output
  CHECK(pre.angular == Approx(0.25));
  CHECK(pre.rel_update == Approx(1.0 / std::sqrt(8.0)));
  CHECK(pre.branch_share == Approx(1.0 / 16));
  const SuRow post = su_postln(0.5, 8, 2, 16);
  CHECK(post.cos_next == Approx(1.0 / std::sqrt(1.5)));
  CHECK(post.cos_m == Approx(1.0 / 1.5));
  CHECK(post.rel_update == Approx(std::sqrt(2.0 - 2.0 / std::sqrt(1.5))));
  // Linear branch: merge error sqrt(2(1 - c)) ~ tau^(-1/2).
  const double e = su_merge_error(0.0, 0.5, 400, [](double rho) { return rho; });
  CHECK(e == Approx(1.0 / std::sqrt(400.0)).epsilon(0.01));
}

TEST_CASE("Pre-LN closed forms (theory.md §2.2 P7, §5)") {
  CHECK(preln_gain_sq(0.5, 4e-4) == Approx(1251.0));  // std-0.02 embeddings: G_0^2 ~ 1250
  CHECK(preln_act_sq(1.0, 0.5, 24) == Approx(13.0));
  CHECK(harmonic(32) == Approx(4.0584954));
  // With chi = q the Gamma product telescopes to v_K / v_k.
  CHECK(preln_grad_ratio(1.0, 0.5, 0.5, 4, 24) == Approx(13.0 / 3.0));
  CHECK(periln_gain_sq(0.5, 0.5, 1.0, 3.0) == Approx(1.0 + 1.0 / 3.0));
  CHECK(deepnorm_gain_sq(2.0, 0.1, 0.1) == Approx(1.0));
}

TEST_CASE("token-cosine recursions (theory.md §3(d))") {
  // Post-LN attention: 1 - rho' = (1 - rho)/(1 + sigma_A^2 c).
  const double rho = 0.3, c = 1.0 / 64 + (1 - 1.0 / 64) * rho;
  CHECK(1.0 - token_cos_post_attention(rho, 1.0, 64) == Approx((1.0 - rho) / (1.0 + c)));
  CHECK(token_cos_pre_attention(rho, 1.0, 1.0, 64) == Approx(token_cos_post_attention(rho, 1.0, 64)));
  const double k = gaussian_kappa(Activation::relu, 1.0, rho);
  CHECK(token_cos_post_mlp(rho, 0.5, k) == Approx((rho + 0.5 * k) / 1.5));
  CHECK(token_cos_pre_mlp(rho, 3.0, 0.5, k) == Approx((3.0 * rho + 0.5 * k) / 3.5));
}
