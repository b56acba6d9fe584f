// The mean-field output change under a random update against theory.md §2.9's closed forms: Post-LN
// 2 s^2 K q/(1+q), Pre-LN 2 s^2 sum_k q/(v0 + (k+1) q), both at infinite width (q = 1/2 for ReLU at gain 1).
#include "theory/update_response.hpp"

#include <catch2/catch.hpp>

using namespace normsim::theory;

namespace {
StackSpec random_update_stack(Placement p, int depth) {
  StackSpec s;
  s.placement = p;
  s.depth = depth;
  s.random_update_scale = 0.01;
  return s;
}
}  // namespace

TEST_CASE("random-update output change: Post-LN linear in depth, Pre-LN harmonic") {
  const double s2 = 1e-4, q = 0.5;
  const MeanFieldProfile post = meanfield(random_update_stack(Placement::post, 32));
  REQUIRE(post.output_change.size() == 33);
  for (int l = 0; l <= 32; ++l)
    CHECK(*post.output_change[l] == Approx(2 * s2 * l * q / (1 + q)).margin(1e-15));
  const MeanFieldProfile pre = meanfield(random_update_stack(Placement::pre, 32));
  double sum = 0;
  for (int l = 1; l <= 32; ++l) {
    sum += q / (1.0 + l * q);
    CHECK(*pre.output_change[l] == Approx(2 * s2 * sum).epsilon(1e-12));
  }
}

TEST_CASE("random-update output change is not predicted where no closed form exists") {
  StackSpec s = random_update_stack(Placement::deepnorm, 8);
  CHECK(meanfield(s).output_change.empty());
  s = random_update_stack(Placement::pre, 8);
  s.activation = Activation::gelu;
  CHECK(meanfield(s).output_change.empty());
  s.activation = Activation::relu;
  s.sublayer = SublayerKind::transformer;
  CHECK(meanfield(s).output_change.empty());
  s = random_update_stack(Placement::post, 8);
  s.random_update_scale = 0;
  CHECK(meanfield(s).output_change.empty());
}
