// `variants`: a list of tables, one swept dimension whose points each set several keys
// (experiments/README.md, "Variants"), labelled, with defaults where a variant leaves a key out, and its
// mistakes named at their line.
#include <catch2/catch.hpp>
#include <string>

#include "sim/run/config_file.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;
namespace vocab = normsim::vocab;

namespace {
Grid parse(const std::string& text, std::vector<std::string> sets = {}) {
  return parse_grid(text, "experiments/families/x.toml", sets);
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("variants are one dimension of the grid, in their place in the file's order") {
  const Grid g = parse(
      "width = 64\n"
      "variants = [\n"
      "  {label = \"LayerNorm\", norm = \"layernorm\"},\n"
      "  {label = \"DyT, LLaMA alphas\", norm = \"dyt\", norm_alpha = \"attention ? 0.8 : 0.2\", "
      "final_norm_alpha = 0.2},\n"
      "  {norm = \"derf\", norm_shift = \"0.1\"},\n"
      "]\n"
      "depth = [4, 8]\n");
  CHECK(g.swept_keys ==
        std::vector<std::string>{"label", "norm", "norm_alpha", "final_norm_alpha", "norm_shift", "depth"});
  REQUIRE(g.configs.size() == 6);  // 3 variants x 2 depths, not the product of the variants' keys
  const Config defaults;
  for (std::size_t i = 0; i < 6; ++i) {
    INFO("config " << i);
    const Config& c = g.configs[i];
    CHECK(c.depth == (i % 2 ? 8 : 4));  // depth, written after variants, varies fastest
    CHECK(c.width == 64);
    switch (i / 2) {
      case 0:
        CHECK(c.label == "LayerNorm");
        CHECK(c.norm == vocab::Norm::layernorm);
        CHECK(c.norm_alpha == defaults.norm_alpha);  // a key the variant leaves out: its default
        CHECK(c.final_norm_alpha == defaults.final_norm_alpha);
        break;
      case 1:
        CHECK(c.label == "DyT, LLaMA alphas");
        CHECK(c.norm == vocab::Norm::dyt);
        CHECK(c.norm_alpha == "attention ? 0.8 : 0.2");
        CHECK(c.final_norm_alpha == 0.2);
        CHECK(c.norm_shift == defaults.norm_shift);
        break;
      default:  // no label: named by its keys
        CHECK(c.label == "norm=derf, norm_shift=0.1");
        CHECK(c.norm == vocab::Norm::derf);
        CHECK(c.norm_shift == "0.1");
        CHECK(c.norm_alpha == defaults.norm_alpha);
    }
  }
}

TEST_CASE("a --set of a variant's key applies to every variant") {
  const Grid g =
      parse("variants = [{label = \"a\", width = 32}, {label = \"b\", width = 64}]\n", {"width=16"});
  REQUIRE(g.configs.size() == 2);
  CHECK(g.configs[0].label == "a");
  CHECK(g.configs[1].label == "b");
  CHECK(g.configs[0].width == 16);
  CHECK(g.configs[1].width == 16);
}

TEST_CASE("mistakes in variants name the file, the line and what is wrong") {
  using Catch::Matchers::Contains;
  CHECK_THAT(error_of("variants = [{norm = \"dyt\"}, {norm = \"dyt\"}]\n"),
             Contains("x.toml:1: key 'variants': two variants are named \"norm=dyt\""));
  CHECK_THAT(error_of("variants = [{label = \"a\", norm = \"dyt\"},\n {label = \"b\", norm = \"tanh\"}]\n"),
             Contains("x.toml:2: key 'norm'"));
  CHECK_THAT(error_of("variants = [{label = \"a\", depth = [4, 8]}]\n"),
             Contains("x.toml:1: key 'variants': depth: a variant sets one value per key"));
  CHECK_THAT(error_of("variants = [{label = \"a\", metrics = \"act_sq\"}]\n"),
             Contains("metrics: is the same for every variant"));
  CHECK_THAT(error_of("variants = [{label = \"a\", nrom = \"dyt\"}]\n"), Contains("unknown key 'nrom'"));
  CHECK_THAT(error_of("variants = [\"dyt\"]\n"), Contains("key 'variants': expected a list of tables"));
  CHECK_THAT(error_of("variants = []\n"), Contains("key 'variants': expected a list of tables"));
  CHECK_THAT(error_of("variants = [{}]\n"), Contains("an empty variant sets no key"));
  CHECK_THAT(error_of("norm = \"dyt\"\nvariants = [{label = \"a\", norm = \"derf\"}]\n"),
             Contains("key 'norm' is set both at the top level and in `variants`"));
  // A variant's impossible combination is blamed on its own line.
  CHECK_THAT(error_of("sublayer = \"mlp\"\nvariants = [{label = \"a\"},\n {label = \"b\", moe_experts = 2, "
                      "moe_top_k = 3}]\n"),
             Contains("x.toml:3:"));
}
