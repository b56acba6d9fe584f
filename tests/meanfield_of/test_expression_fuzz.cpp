// A fuzz test of the expression language (issue 25): block and branch_scale expressions, generated from the
// grammar, mutated, random and hand-written (a fixed seed: the same 3,100 cases every run), each through the
// config's edge and, when accepted, through the simulator and the mean field on a tiny stack. Every case
// ends in one of two ways: a grid, or a ConfigError naming file, line, key and column. Never a signal
// (the test would die), a hang (ctest's TIMEOUT), or a silent 0: where the mean field's stream overflowed,
// nothing derived from it (token_cos, cos_next, rel_update) is predicted either.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "meanfield_of/spec_from_config.hpp"
#include "sim/backend.hpp"
#include "sim/placement.hpp"
#include "sim/run/config_file.hpp"
#include "theory/meanfield.hpp"

using namespace normsim;

namespace {

using Rng = std::mt19937_64;

int pick(Rng& rng, int n) {
  return std::uniform_int_distribution<int>(0, n - 1)(rng);
}

// A number expression: numbers (zeros, huge, tiny), k, K, b, L, m_N, m_L, sqrt, floor, arithmetic with
// powers, comparisons.
std::string number(Rng& rng, int depth) {
  static const char* leaves[] = {"0", "1", "2", "0.5", "1e300", "1e-300", "k",
                                 "K", "b", "L", "3",   "m_N",   "m_L"};
  if (depth <= 0 || pick(rng, 3) == 0) return leaves[pick(rng, 13)];
  switch (pick(rng, 6)) {
    case 0:
      return std::string("sqrt(") + number(rng, depth - 1) + ")";
    case 1:
      return std::string("floor(") + number(rng, depth - 1) + ")";
    case 2:
      return std::string("-") + number(rng, depth - 1);
    case 3:
      return std::string("(") + number(rng, depth - 1) + " < " + number(rng, depth - 1) + " ? " +
             number(rng, depth - 1) + " : " + number(rng, depth - 1) + ")";
    default:
      return std::string("(") + number(rng, depth - 1) + " " + "+-*/^"[pick(rng, 5)] + " " +
             number(rng, depth - 1) + ")";
  }
}

// A stream expression over x (and x0 in a pair) that calls F exactly once: F's argument is a stream
// without F, and the rest adds, scales or normalizes around it.
std::string stream_without_f(Rng& rng, int depth, bool paired) {
  if (depth <= 0 || pick(rng, 3) == 0) return paired && pick(rng, 3) == 0 ? "x0" : "x";
  switch (pick(rng, 4)) {
    case 0:
      return std::string("N(") + stream_without_f(rng, depth - 1, paired) + ")";
    case 1:
      return std::string("(") + stream_without_f(rng, depth - 1, paired) + " * " + number(rng, 2) + ")";
    case 2:
      return std::string("(") + stream_without_f(rng, depth - 1, paired) + " / " + number(rng, 2) + ")";
    default:
      return std::string("(") + stream_without_f(rng, depth - 1, paired) + " - " +
             stream_without_f(rng, depth - 1, paired) + ")";
  }
}

std::string sublayer(Rng& rng, bool paired) {
  std::string f = std::string("F(") + stream_without_f(rng, 2, paired) + ")";
  switch (pick(rng, 4)) {
    case 0:
      f = std::string("N(") + f + ")";
      break;
    case 1:
      f = f + " * " + number(rng, 2);
      break;
    case 2:
      f = f + " / " + number(rng, 1);
      break;
    default:
      break;
  }
  const std::string rest = stream_without_f(rng, 2, paired);
  return pick(rng, 4) == 0 ? std::string("N(") + rest + " + " + f + ")" : rest + " + " + f;
}

// A sublayer, or a condition between two (each arm calls F once): an arm may skip x, a dead branch.
std::string arm_or_condition(Rng& rng, bool paired) {
  if (pick(rng, 4) != 0) return sublayer(rng, paired);
  return number(rng, 1) + " < " + number(rng, 1) + " ? " + sublayer(rng, paired) + " : " +
         sublayer(rng, paired);
}

std::string block(Rng& rng) {
  return pick(rng, 3) == 0 ? arm_or_condition(rng, true) + "; " + arm_or_condition(rng, true)
                           : arm_or_condition(rng, false);
}

// Deletes, inserts or replaces a few characters (grammar-aware pieces as well as single characters).
std::string mutated_with(Rng& rng, std::string text, const std::vector<std::string>& pieces) {
  for (int i = 0, n = 1 + pick(rng, 3); i < n && !text.empty(); ++i) {
    const std::size_t at = std::size_t(pick(rng, int(text.size())));
    switch (pick(rng, 3)) {
      case 0:
        text.erase(at, 1);
        break;
      case 1:
        text.insert(at, pieces[std::size_t(pick(rng, int(pieces.size())))]);
        break;
      default:
        text[at] = "xF()N+-*/;?:<0. "[pick(rng, 16)];
    }
  }
  return text;
}

std::string mutated(Rng& rng, std::string text) {
  static const std::vector<std::string> pieces = {"(",     ")", "F(", "N(", "x",     "x0",   "+",
                                                  "-",     "*", "/",  "?",  ":",     "<",    ";",
                                                  "1e400", "é", "0",  " ",  "Fqkv(", "sqrt("};
  return mutated_with(rng, std::move(text), pieces);
}

// As mutated, with the lanes' pieces too.
std::string mutated_lanes(Rng& rng, std::string text) {
  static const std::vector<std::string> pieces = {"(", ")", "F(", "N(",   "x",     "x0",     "+",       "-",
                                                  "*", "/", "?",  ":",    "1e400", "0",      " ",       "[",
                                                  "]", ",", "@",  "x[1]", "x[7]",  "[1, 0]", "sigmoid("};
  return mutated_with(rng, std::move(text), pieces);
}

std::string random_text(Rng& rng) {
  std::string t;
  for (int i = 0, n = pick(rng, 24); i < n; ++i) t += "xFN()+-*/;?:<0123456789.eK kbL_"[pick(rng, 31)];
  return t;
}

// A block of n = 2 or 3 lanes (docs/design/multistream.md 3.2): a mixing matrix, a branch through a vector or
// a lane, maybe an emb skip; entries literal 0 and 1 (lowered away), other numbers, sigmoid and k.
std::string lanes_block(Rng& rng) {
  static const char* entries[] = {"0", "1", "0.5", "-1", "k", "sigmoid(1)", "1e300", "0"};
  const int n = 2 + pick(rng, 2);
  const auto vector = [&] {
    std::string v = "[";
    for (int j = 0; j < n; ++j) v += std::string(j ? ", " : "") + entries[pick(rng, 8)];
    return v + "]";
  };
  std::string m = "[";
  for (int i = 0; i < n; ++i) m += std::string(i ? ", " : "") + vector();
  m += "]";
  const std::string lane = "x[" + std::to_string(pick(rng, n)) + "]";
  const std::string input = pick(rng, 2) == 0 ? vector() + " @ x" : lane;
  std::string text = m + " @ x + " + vector() + " * F(N(" + input + "))";
  if (pick(rng, 3) == 0) text += " + " + vector() + " * emb";
  return text;
}

// The edge cases the reliability campaign found, written out.
std::vector<std::string> hand_written() {
  std::string deep = "x + F(x)", minus = "x", flat = "x + F(x)";
  for (int i = 0; i < 200; ++i) deep = std::string("(") + deep + ")";
  for (int i = 0; i < 1500; ++i) minus = std::string("-") + minus;
  std::string longest = "x+F(x)";  // 4,096 characters: the deepest tree the length bound lets through
  for (int i = 0; i < 2045; ++i) longest += "+x";
  for (int i = 0; i < 1500; ++i) flat += " + x";
  return {longest,
          "x + F(x)/0",
          "x + F(x) * 0",
          "x + F(N(x*0))",
          "x + F(x); x0 + F(x0)",
          deep,
          minus + " + F(x)",
          flat,
          "x + F(x) * 1e400",
          "x + F(x) é",
          "N(x + F(x)); x + F(x) + x0",
          "x + F(x) * (k < 2 ? 1 : 0)",
          "x + F(x) / sqrt(k - k)",
          "x + F(x) * floor(0.5)",
          "",
          ";",
          "x + F(x);",
          "x + F(x) ; ; x + F(x)"};
}

// A ConfigError names the file, the line and the key, and for an expression the column.
void check_refusal(const std::string& what, const std::string& key) {
  INFO(what);
  CHECK(what.rfind("fuzz.toml:", 0) == 0);
  if (what.find("TOML syntax error") != std::string::npos) return;  // a mutated UTF-8 byte: file and line
  CHECK(what.find("key '" + key + "'") != std::string::npos);
  const bool column = what.find("column ") != std::string::npos;
  // Refusals of the value as a whole: an odd depth for a pair, an empty block for placement custom.
  const bool not_an_expression =
      what.find("depth") != std::string::npos || what.find("needs a block expression") != std::string::npos;
  CHECK((column || not_an_expression));
}

// Runs an accepted config through the simulator and the mean field; no value derived from an overflowed
// mean-field stream may be predicted.
void run_accepted(const sim::Grid& grid, sim::Backend& backend) {
  for (const auto& config : grid.configs) {
    backend.run(config, std::vector<int>{0});
    const auto profile = theory::meanfield(meanfield_of::to_stack_spec(config));
    for (std::size_t l = 0; l < profile.act_sq.size(); ++l) {
      if (profile.act_sq[l]) continue;
      CHECK_FALSE(profile.token_cos[l].has_value());
      if (l < profile.cos_next.size()) CHECK_FALSE(profile.cos_next[l].has_value());
      if (l < profile.rel_update.size()) CHECK_FALSE(profile.rel_update[l].has_value());
    }
  }
}

void one_case(const std::string& key, const std::string& expression, sim::Backend& backend, int& ran,
              int& refused) {
  std::string text = "width = 8\ntokens = 2\nsamples = 1\ndepth = 4\nsublayer = \"mlp\"\n";
  text += key == "block" ? "placement = \"custom\"\n" : "placement = \"pre\"\n";
  std::string escaped;
  for (const char c : expression)
    escaped += c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
  text += key + " = \"" + escaped + "\"\n";
  sim::Grid grid;
  try {
    grid = sim::parse_grid(text, "fuzz.toml");
  } catch (const sim::ConfigError& e) {
    check_refusal(e.what(), key);
    ++refused;
    return;
  }
  INFO(key << " = " << expression);
  run_accepted(grid, backend);
  ++ran;
}

}  // namespace

TEST_CASE("fuzzed block and branch_scale expressions: a run or a refusal with its column", "[fuzz]") {
  Rng rng(20261127);
  auto backend = sim::make_backend(normsim::vocab::BackendChoice::cpu, 1);
  int ran = 0, refused = 0;
  std::vector<std::pair<std::string, std::string>> cases;
  for (const auto& e : hand_written()) cases.emplace_back("block", e);
  for (int i = 0; i < 1000; ++i) cases.emplace_back("block", block(rng));
  for (int i = 0; i < 1000; ++i) cases.emplace_back("block", mutated(rng, block(rng)));
  for (int i = 0; i < 400; ++i) cases.emplace_back("block", random_text(rng));
  for (int i = 0; i < 400; ++i) cases.emplace_back("branch_scale", number(rng, 3));
  for (int i = 0; i < 300; ++i) cases.emplace_back("branch_scale", mutated(rng, number(rng, 3)));
  for (const auto& [key, expression] : cases) one_case(key, expression, *backend, ran, refused);
  INFO(ran << " ran, " << refused << " refused");
  CHECK(ran + refused == int(cases.size()));
  CHECK(cases.size() >= 1000);
  CHECK(ran >= 1000);  // the generator makes mostly valid expressions: the interpreters are exercised
  CHECK(refused >= 1000);
}

// Blocks of lanes, generated and mutated (their own seed: the cases above stay the same): a run on the
// simulator, whose mean field is refused with its reason, or a refusal with its column.
TEST_CASE("fuzzed blocks of lanes: a run or a refusal with its column", "[fuzz]") {
  Rng rng(20261128);
  auto backend = sim::make_backend(normsim::vocab::BackendChoice::cpu, 1);
  int ran = 0, refused = 0;
  std::vector<std::string> cases;
  for (int i = 0; i < 300; ++i) cases.push_back(lanes_block(rng));
  for (int i = 0; i < 300; ++i) cases.push_back(mutated_lanes(rng, lanes_block(rng)));
  for (const auto& expression : cases) one_case("block", expression, *backend, ran, refused);
  INFO(ran << " ran, " << refused << " refused");
  CHECK(ran + refused == int(cases.size()));
  CHECK(ran >= 100);
  CHECK(refused >= 100);
}
