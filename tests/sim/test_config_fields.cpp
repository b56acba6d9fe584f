// The Config's fields by name (sim/config.hpp, kConfigFields), through which the block language reads numeric
// keys (the key table's use of them: tests/run/test_config_file.cpp).
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>

#include "sim/config.hpp"
#include "sim/placements/expression.hpp"

using namespace normsim::sim;

TEST_CASE("an expression reads integer and float keys by name, and refuses others") {
  Config c;
  c.width = 128, c.mlp_ratio = 2.5, c.seed = 7, c.rezero_alpha = -0.25;
  const StackShape s(c);
  const auto env = scalar_env(s, 0);
  CHECK(env.param("width") == 128.0);
  CHECK(env.param("mlp_ratio") == 2.5);
  CHECK(env.param("seed") == 7.0);
  CHECK(env.param("rezero_alpha") == -0.25);
  CHECK_THROWS_WITH(env.param("activation"), "parameter 'activation' is not a number");
  CHECK_THROWS_WITH(env.param("causal"), "parameter 'causal' is not a number");
  CHECK_THROWS_WITH(env.param("widht"), "unknown parameter 'widht'");
}
