// Config files: key order, grid expansion and ids, --set, and an error naming file, line and key for every
// impossible config.
#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/placement.hpp"
#include "sim/run/config_file.hpp"
#include "sim/run/config_schema.hpp"
#include "tests/sim/config_cases.hpp"
#include "tests/sim/test_util.hpp"
#include "vocab/names.hpp"

using namespace normsim::sim;
namespace vocab = normsim::vocab;

namespace {
Grid parse(const std::string& text, std::vector<std::string> sets = {}) {
  return parse_grid(text, "experiments/x.toml", sets);
}
}  // namespace

TEST_CASE("a file without lists is one config, defaults elsewhere") {
  const Grid g = parse("width = 64\nplacement = \"post\"\nnorm_eps = 1\n");
  REQUIRE(g.configs.size() == 1);
  CHECK(g.swept_keys.empty());
  CHECK(g.configs[0].width == 64);
  CHECK(g.configs[0].placement == normsim::vocab::Placement::post);
  CHECK(g.configs[0].norm_eps == 1.0);  // an integer where a float is expected
  CHECK(g.configs[0].depth == Config{}.depth);
  CHECK(g.name == "x");
}

TEST_CASE("lists expand to the Cartesian product, the first list in the file varying slowest") {
  // Keys out of alphabetical order: the file's order must win over toml++'s sorted tables.
  const Grid g = parse("width = [8, 16]\ndepth = 4\nplacement = [\"pre\", \"post\", \"peri\"]\n");
  REQUIRE(g.swept_keys == std::vector<std::string>{"width", "placement"});
  REQUIRE(g.configs.size() == 6);
  using vocab::Placement;
  const std::vector<std::pair<int, Placement>> expected{{8, Placement::pre},   {8, Placement::post},
                                                        {8, Placement::peri},  {16, Placement::pre},
                                                        {16, Placement::post}, {16, Placement::peri}};
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("config " << i);
    CHECK(g.configs[i].width == expected[i].first);
    CHECK(g.configs[i].placement == expected[i].second);
    CHECK(g.configs[i].depth == 4);
  }
}

TEST_CASE("a one-element list is still a swept key") {
  const Grid g = parse("depth = [8]\n");
  CHECK(g.swept_keys == std::vector<std::string>{"depth"});
  CHECK(g.configs.size() == 1);
}

TEST_CASE("metrics: a list of names that does not sweep, parsed into metric ids") {
  SECTION("default: every metric not marked costly") {
    const Grid g = parse("depth = 4\n");
    CHECK(g.configs[0].metrics == MetricSet::defaults());
    for (int m = 0; m < metric::count; ++m)
      CHECK(g.configs[0].metrics.contains(m) == !normsim::sim::metric_table()[std::size_t(m)].costly);
  }
  SECTION("a list in the file is one value, next to a swept key") {
    const Grid g = parse("metrics = [\"grad_sq\", \"act_sq\"]\ndepth = [4, 8]\n");
    CHECK(g.swept_keys == std::vector<std::string>{"depth"});
    REQUIRE(g.configs.size() == 2);
    for (const auto& c : g.configs) {
      CHECK(c.metrics.names() == std::vector<std::string>{"act_sq", "grad_sq"});  // table order
      CHECK(c.metrics.any_of(normsim::sim::MetricPass::backward));
    }
  }
  SECTION("--set: a list, unquoted words, or one name") {
    CHECK(parse("depth = 4\n", {"metrics=[act_sq,token_cos]"}).configs[0].metrics.names() ==
          std::vector<std::string>{"act_sq", "token_cos"});
    const Grid one = parse("depth = 4\n", {"metrics=cos_next"});
    CHECK(one.swept_keys.empty());
    CHECK(one.configs[0].metrics.names() == std::vector<std::string>{"cos_next"});
    CHECK_FALSE(one.configs[0].metrics.any_of(normsim::sim::MetricPass::backward));
  }
}

TEST_CASE("an override (--set) replaces a key in place, or adds it after the file's keys") {
  const std::string file = "depth = [4, 8]\nwidth = [16, 32]\n";
  SECTION("a list replacing a scalar keeps the file position") {
    const Grid g = parse("depth = 4\nwidth = [16, 32]\n", {"depth=[2,6]"});
    CHECK(g.swept_keys == std::vector<std::string>{"depth", "width"});
    REQUIRE(g.configs.size() == 4);
    CHECK(g.configs[1].depth == 2);
    CHECK(g.configs[1].width == 32);
    CHECK(g.configs[2].depth == 6);
  }
  SECTION("a scalar replacing a list unsweeps it") {
    const Grid g = parse(file, {"depth=16"});
    CHECK(g.swept_keys == std::vector<std::string>{"width"});
    CHECK(g.configs.size() == 2);
    CHECK(g.configs[0].depth == 16);
  }
  SECTION("a new key goes last, so it varies fastest") {
    const Grid g = parse(file, {"placement=[pre, post]"});
    CHECK(g.swept_keys == std::vector<std::string>{"depth", "width", "placement"});
    REQUIRE(g.configs.size() == 8);
    CHECK(g.configs[0].placement == normsim::vocab::Placement::pre);
    CHECK(g.configs[1].placement == normsim::vocab::Placement::post);
    CHECK(g.configs[1].width == 16);
  }
  SECTION("TOML values, bare words and quoted strings") {
    const Grid g = parse(
        "", {"placement=post", "init_w2=\"fixed:0.01\"", "causal=true", "mlp_ratio=2", "run.name=trial"});
    CHECK(g.configs[0].placement == normsim::vocab::Placement::post);
    CHECK(g.configs[0].init_w2 == "fixed:0.01");
    CHECK(g.configs[0].causal);
    CHECK(g.configs[0].mlp_ratio == 2.0);
    CHECK(g.name == "trial");
  }
}

TEST_CASE("final_norm takes a boolean or \"auto\"") {
  CHECK(parse("final_norm = false\n").configs[0].final_norm == vocab::FinalNorm::never);
  CHECK(parse("final_norm = true\n").configs[0].final_norm == vocab::FinalNorm::always);
  CHECK(parse("final_norm = \"auto\"\n").configs[0].final_norm == vocab::FinalNorm::auto_);
}

TEST_CASE("the [run] table holds name and description") {
  const Grid g = parse("depth = 4\n[run]\nname = \"depth test\"\ndescription = \"why\"\n");
  CHECK(g.name == "depth test");
  CHECK(g.description == "why");
  CHECK(g.configs.size() == 1);
}

TEST_CASE("every impossible config names the file, the line and the key") {
  for (const auto& c : normsim::test::bad_configs()) {
    INFO(c.name);
    try {
      parse(c.toml, c.sets);
      FAIL("no ConfigError for: " << c.name);
    } catch (const ConfigError& e) {
      const std::string msg = e.what();
      INFO(msg);
      const std::string where =
          c.where.starts_with("--set") ? c.where + ":" : "experiments/x.toml" + c.where + ":";
      CHECK(msg.starts_with(where));
      CHECK(msg.find(c.key) != std::string::npos);
      CHECK(msg.find(c.why) != std::string::npos);
    }
  }
}

TEST_CASE("every problem of a config is reported at once, one line each, in file order") {
  try {
    parse("depth = 0\nwidth = -3\nfoo = 1\nactivation = \"relux\"\n", {"metrics=[x]", "seed=-1"});
    FAIL("no ConfigError");
  } catch (const ConfigError& e) {
    std::istringstream lines(e.what());
    std::vector<std::string> got;
    for (std::string line; std::getline(lines, line);) got.push_back(line);
    REQUIRE(got.size() == 6);
    CHECK(got[0].starts_with("experiments/x.toml:1: key 'depth'"));
    CHECK(got[1].starts_with("experiments/x.toml:2: key 'width'"));
    CHECK(got[2].starts_with("experiments/x.toml:3: unknown key 'foo'"));
    CHECK(got[3].starts_with("experiments/x.toml:4: key 'activation'"));
    CHECK(got[4].starts_with("--set metrics=[x]: key 'metrics'"));
    CHECK(got[5].starts_with("--set seed=-1: key 'seed'"));
  }
}

TEST_CASE("a key that --set gives is not read from the file") {
  const std::string bad_block = "placement = \"custom\"\nblock = \"x + foo(x)\"\ndepth = [2, 4]\n";
  const Grid g = parse(bad_block, {"block=\"x + N(F(x))\""});
  REQUIRE(g.configs.size() == 2);
  CHECK(g.configs[0].block == "x + N(F(x))");
  try {
    parse(bad_block, {"block=\"x + G(x)\""});
    FAIL("no ConfigError");
  } catch (const ConfigError& e) {  // only the override's problem: the file's value was never read
    CHECK(std::string(e.what()).starts_with("--set block=\"x + G(x)\": key 'block'"));
    CHECK(std::string(e.what()).find("foo") == std::string::npos);
  }
}

TEST_CASE("the message for heads reads as documented") {
  try {
    parse("sublayer = \"attention\"\nwidth = 256\nheads = 3\n");
    FAIL();
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()) == "experiments/x.toml:3: key 'heads': 3 does not divide width 256");
  }
}

TEST_CASE("an MLP stack does not care whether heads divides width") {
  CHECK(parse("width = 6\n").configs.size() == 1);
}

TEST_CASE("a missing file is a ConfigError naming it") {
  CHECK_THROWS_WITH(load_grid("/nonexistent/normsim.toml"), Catch::Contains("/nonexistent/normsim.toml"));
}

TEST_CASE("a grid beyond the size limit is refused") {
  const auto list = [](const char* key) {
    std::string s = std::string(key) + " = [";
    for (int i = 1; i <= 1001; ++i) s += std::to_string(2 * i) + ",";
    return s + "]\n";
  };
  CHECK_THROWS_WITH(parse(list("width") + list("depth")), Catch::Contains("more than 1000000"));
}

TEST_CASE("validate accepts the defaults and every listed name") {
  CHECK(validate(Config{}).empty());
  for (const auto& p : placement_choices()) {
    Config c;
    c.placement = vocab::parse<vocab::Placement>(p.name);
    if (c.placement == vocab::Placement::custom) c.block = "x + N(F(x))";
    CHECK(validate(c).empty());
  }
  for (const auto& a : activation_choices()) {
    Config c;
    c.activation = vocab::parse<vocab::Activation>(a.name);
    CHECK(validate(c).empty());
  }
}

TEST_CASE("every key round-trips through its setter and has a meaning") {
  const Config defaults;
  for (const auto& k : config_keys()) {
    INFO(k.name);
    CHECK(!k.meaning.empty());
    CHECK(!k.allowed.empty());
    Config c;
    k.set(c, k.get(defaults));
    CHECK(k.get(c) == k.get(defaults));
    CHECK(k.check(k.get(defaults)).empty());
  }
}

TEST_CASE("every placement name has exactly one registered implementation, listed under its name") {
  const auto registry = all_placements();
  REQUIRE(vocab::table<vocab::Placement>().size() == registry.size() + 1);  // + custom
  REQUIRE(placement_choices().size() == registry.size() + 1);
  for (const auto& named : vocab::table<vocab::Placement>()) {
    INFO(named.name);
    if (named.value == vocab::Placement::custom) continue;
    CHECK(find_placement(named.value).id() == named.value);
    CHECK(std::count_if(registry.begin(), registry.end(), [&](auto* p) { return p->id() == named.value; }) ==
          1);
    const auto& names = placement_choices();
    CHECK(std::any_of(names.begin(), names.end(), [&](const Choice& c) { return c.name == named.name; }));
  }
}

// Issue 25 4: a pair whose second expression never reads x leaves the first expression's branch dead (no
// gradient reaches it: sgd/adam failed with exit 1 after creating OUT, the gradient norms were NaN where the
// exact value is 0). Refused at its line and column, before anything runs.
TEST_CASE("a dead branch in a pair is refused at its column") {
  try {
    parse("placement = \"custom\"\nblock = \"x + F(x); x0 + F(x0)\"\n");
    FAIL("no ConfigError");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("key 'block': column 11: the second expression does not read x"));
  }
  // Through a condition: the arm that skips x is dead at the sublayers it runs.
  CHECK_THROWS_AS(parse("placement = \"custom\"\nblock = \"x + F(x); k < 1000 ? x0 + F(x0) : x + F(x)\"\n"),
                  ConfigError);
  CHECK(
      parse("placement = \"custom\"\nblock = \"x + F(x); k < 2 ? x + F(x0) : x + F(x)\"\n").configs.size() ==
      1);
  CHECK(parse("placement = \"custom\"\nblock = \"x + F(x); x + F(x) + x0\"\n").configs.size() == 1);
  CHECK(parse("placement = \"custom\"\nblock = \"x + F(x); x + F(x0)\"\n").configs.size() == 1);
}

TEST_CASE("the key table's rows are the Config's fields, in their order") {
  std::vector<std::string> fields, rows;
  for_each_config_field([&](std::string_view name, auto) { fields.emplace_back(name); });
  for (const KeyInfo& k : config_keys()) rows.emplace_back(k.name);
  CHECK(rows == fields);
  CHECK(config_field_name(&Config::mlp_ratio) == "mlp_ratio");
  CHECK(config_field_name(&Config::metrics) == "metrics");
}
