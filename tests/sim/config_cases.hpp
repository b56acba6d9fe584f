// Impossible config files and overrides, each with the line and key its error must name. Shared by the
// library tests (parse_grid) and the CLI tests (exit status 2, nothing written).
#pragma once
#include <string>
#include <vector>

namespace normsim::test {

struct BadConfig {
  std::string name;
  std::string toml;
  std::vector<std::string> sets;
  std::string where;  // ":LINE" in the file, or "--set ..." for an override
  std::string key;    // "key 'K'" or the unknown key's quoted name
  std::string why;    // a fragment of the reason
};

inline const std::vector<BadConfig>& bad_configs() {
  static const std::vector<BadConfig> cases{
      {"width 0", "depth = 4\nwidth = 0\n", {}, ":2", "key 'width'", ">= 1"},
      {"heads do not divide width",
       "sublayer = \"attention\"\nwidth = 256\n\n# six lines in\n\n\nheads = 3\n",
       {},
       ":7",
       "key 'heads'",
       "3 does not divide width 256"},
      {"heads blamed on width when heads is not set",
       "sublayer = \"transformer\"\nwidth = 6\n",
       {},
       ":2",
       "key 'heads'",
       "4 does not divide width 6"},
      {"fraction above 1",
       "placement = \"mix\"\nmix_fraction = 1.5\n",
       {},
       ":2",
       "key 'mix_fraction'",
       "[0, 1]"},
      {"correlation below 0", "input_corr = -0.1\n", {}, ":1", "key 'input_corr'", "[0, 1]"},
      {"unknown placement",
       "width = 64\nplacement = \"prenorm\"\n",
       {},
       ":2",
       "key 'placement'",
       "'prenorm'"},
      {"unknown placement in a list",
       "placement = [\n  \"pre\",\n  \"pots\",\n]\n",
       {},
       ":3",
       "key 'placement'",
       "did you mean 'post'"},
      {"unknown sublayer", "sublayer = \"convolution\"\n", {}, ":1", "key 'sublayer'", "'convolution'"},
      {"unknown activation", "activation = \"relux\"\n", {}, ":1", "key 'activation'", "'relux'"},
      {"unknown norm", "norm = \"batchnorm\"\n", {}, ":1", "key 'norm'", "'batchnorm'"},
      {"unknown init", "init = \"kaiming\"\n", {}, ":1", "key 'init'", "'kaiming'"},
      {"transformer with odd depth",
       "sublayer = \"transformer\"\ndepth = 15\n",
       {},
       ":2",
       "key 'depth'",
       "odd"},
      {"b2t with an odd depth in a list",
       "placement = \"b2t\"\ndepth = [8,\n 9]\n",
       {},
       ":3",
       "key 'depth'",
       "depth 9 is odd"},
      {"spannorm with odd depth", "depth = 5\nplacement = \"spannorm\"\n", {}, ":1", "key 'depth'", "odd"},
      {"samples 0", "samples = 0\n", {}, ":1", "key 'samples'", ">= 1"},
      {"negative eps", "norm_eps = -1e-5\n", {}, ":1", "key 'norm_eps'", ">= 0"},
      {"override without value", "init_w2 = \"fixed\"\n", {}, ":1", "key 'init_w2'", "rule:value"},
      {"override with bad number", "\ninit_wo = \"fanin:abc\"\n", {}, ":2", "key 'init_wo'", "'abc'"},
      {"override with bad rule", "init_w1 = \"he:1\"\n", {}, ":1", "key 'init_w1'", "'he'"},
      {"unknown key", "depth = 4\nwidht = 64\n", {}, ":2", "unknown key 'widht'", "did you mean 'width'"},
      {"wrong type", "width = \"256\"\n", {}, ":1", "key 'width'", "expected integer, got string"},
      {"float for an integer", "depth = 8.0\n", {}, ":1", "key 'depth'", "expected integer, got float"},
      {"nested list", "depth = [[8, 16]]\n", {}, ":1", "key 'depth'", "nested lists"},
      {"empty list", "depth = []\n", {}, ":1", "key 'depth'", "empty list"},
      {"TOML syntax error", "depth = 8\nwidth = \n", {}, ":2", "TOML syntax error", ""},
      {"unknown table", "[model]\nwidth = 8\n", {}, ":1", "unknown table [model]", ""},
      {"unknown run key", "[run]\nname = \"x\"\nseeds = 3\n", {}, ":3", "unknown key 'run.seeds'", ""},
      {"set: not a number",
       "depth = 8\n",
       {"depth=abc"},
       "--set depth=abc",
       "key 'depth'",
       "expected integer"},
      {"set: unknown key", "depth = 8\n", {"dpeth=4"}, "--set dpeth=4", "unknown key 'dpeth'", ""},
      {"set: no '='", "depth = 8\n", {"depth"}, "--set depth", "key=value", ""},
      {"set: makes heads wrong",
       "sublayer = \"attention\"\n",
       {"heads=3"},
       "--set heads=3",
       "key 'heads'",
       "does not divide"},
      {"set: odd depth list",
       "sublayer = \"transformer\"\n",
       {"depth=[8,7]"},
       "--set depth=[8,7]",
       "key 'depth'",
       "odd"},
  };
  return cases;
}

}  // namespace normsim::test
