// The predicted exponents of a coordinate check (theory/scaling_exponents.hpp): every row cited, and the
// agreement band's principle (half way to the nearest exponent another preset predicts) on known rows.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>

#include "theory/scaling_exponents.hpp"

using namespace normsim::theory;

TEST_CASE("predictions_have_sources", "[scaling]") {
  for (const auto& r : exponent_rows()) {
    INFO(std::string(r.parametrization) + " " + std::string(r.metric));
    const std::string source(r.source);
    // A source's file and line (l.N), or a derivation labelled as normsim's own.
    CHECK((source.find(" l.") != std::string::npos ||
           source.find("normsim's derivation") != std::string::npos));
    CHECK(r.first_step >= 0);
    CHECK((r.last_step < 0 || r.last_step >= r.first_step));
    // A band exists wherever another preset predicts a different exponent: everywhere but width at step 0,
    // where sp and mup both predict 0 (fitted, not judged).
    const bool width_init = r.axis == ScalingAxis::width && r.first_step == 0;
    CHECK(exponent_band({r.axis, r.parametrization, r.metric, r.layers, r.first_step}).has_value() ==
          !width_init);
  }
}

TEST_CASE("coord_verdict_bands", "[scaling]") {
  using L = LayerGroup;
  // Width, step 1: muP flat (0), SP's update grows as width^1 (a lower bound): half way is 1/2.
  const auto mup = exponent_band({ScalingAxis::width, "mup", "act_mean_abs", L::any, 1});
  REQUIRE(mup);
  CHECK(mup->low == -0.5);
  CHECK(mup->high == 0.5);
  const auto sp = exponent_band({ScalingAxis::width, "sp", "act_mean_abs", L::any, 3});
  REQUIRE(sp);
  CHECK(sp->low == 0.5);
  CHECK(std::isinf(sp->high));
  // Step 0: every preset predicts 0, so no alternative sets a band: fitted, not judged.
  CHECK_FALSE(exponent_band({ScalingAxis::width, "mup", "act_sq", L::any, 0}));
  REQUIRE(predicted_exponent({ScalingAxis::width, "mup", "act_sq", L::any, 0}));
  // Depth: the branch multiplier's alpha, 0 / 1/2 / 1, a quarter either side.
  const auto completep = exponent_band({ScalingAxis::depth, "completep", "rel_update", L::first, 0});
  REQUIRE(completep);
  CHECK(completep->low == -1.25);
  CHECK(completep->high == -0.75);
  // After a step depth_mup has no row (its first branch's own update depends on depth): sp's 0 is nearest.
  const auto later = exponent_band({ScalingAxis::depth, "completep", "rel_update", L::first, 2});
  REQUIRE(later);
  CHECK(later->low == -1.5);
  CHECK(later->high == -0.5);
  const auto depth_mup = exponent_band({ScalingAxis::depth, "depth_mup", "rel_update", L::first, 0});
  REQUIRE(depth_mup);
  CHECK(depth_mup->low == -0.75);
  CHECK(depth_mup->high == -0.25);
  // No row: a preset, a layer group or a metric the derivations do not cover.
  CHECK_FALSE(predicted_exponent({ScalingAxis::width, "tfixup", "act_sq", L::any, 1}));
  CHECK_FALSE(predicted_exponent({ScalingAxis::depth, "completep", "rel_update", L::last, 1}));
  CHECK_FALSE(predicted_exponent({ScalingAxis::width, "mup", "gradw_w1", L::any, 1}));
}
