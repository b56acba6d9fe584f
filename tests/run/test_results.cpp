// Result files on hand-made records: summary statistics, column layout, no NaN or Inf in any file (atomic
// writes and number formatting themselves: tests/io).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "sim/metrics.hpp"
#include "sim/run/config_file.hpp"
#include "sim/run/config_schema.hpp"
#include "sim/run/results.hpp"
#include "tests/sim/test_util.hpp"

using namespace normsim::sim;
using normsim::test::read_text;
using normsim::test::ScratchDir;

namespace {
// One config, two metrics filled (act_sq at l = 0..2, cos_next at k = 0..1), the rest empty.
SampleRecord hand_record(int sample, double a0, double a1, double a2, double c0, double c1) {
  SampleRecord r;
  r.sample = sample;
  r.values.resize(metric::count);
  r.values[metric::act_sq] = {a0, a1, a2};
  r.values[metric::cos_next] = {c0, c1};
  return r;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  for (std::string l; std::getline(s, l);) out.push_back(l);
  return out;
}
}  // namespace

TEST_CASE("summarize: mean, se = sd/sqrt(n) with the n-1 sd, n over finite values only") {
  const std::vector<double> v{1.0, 2.0, 3.0, NAN, INFINITY, -INFINITY};
  const Summary s = summarize(v);
  CHECK(s.n == 3);
  CHECK(s.mean == Approx(2.0).epsilon(1e-15));
  CHECK(s.se == Approx(1.0 / std::sqrt(3.0)).epsilon(1e-15));  // sd(1,2,3) = 1

  const std::vector<double> one{5.0};
  CHECK(summarize(one).n == 1);
  CHECK(summarize(one).mean == 5.0);
  CHECK(summarize(one).se == 0.0);

  const std::vector<double> none{NAN};
  CHECK(summarize(none).n == 0);

  const std::vector<double> big{1e308, 1e308, 1e308};  // a plain sum would overflow
  CHECK(summarize(big).mean == Approx(1e308));
  CHECK(summarize(big).se == 0.0);
}

TEST_CASE("layers.csv and summary.csv: every config key, the index in l or k, no non-finite value") {
  ScratchDir dir("results");
  const Grid grid = parse_grid("depth = 2\nplacement = [\"pre\", \"post\"]\nwidth = [16]\n", "g.toml");
  GridRecords records(2);
  records[0] = {hand_record(0, 1, 2, 3, 0.5, 0.25), hand_record(1, 3, NAN, 5, 0.5, INFINITY)};
  records[1] = {hand_record(0, 1, 1, 1, 1, 1), hand_record(1, 1, 1, 1, 1, 1)};
  write_layers_csv(dir / "layers.csv", grid, records);
  write_summary_csv(dir / "summary.csv", grid, records);
  write_nonfinite_csv(dir / "nonfinite.csv", grid, records);

  // Every key is a column, swept or not, placement first: the files of different runs concatenate. The one
  // list of names, `metrics`, is not: it says which rows exist; nor is a key written only when set (the
  // parametrization's, a variant's label, the biases', qk_norm_scope, the edge matrices', the training
  // steps') that no configuration sets.
  const auto when_set =
      std::count_if(config_keys().begin(), config_keys().end(), [](const KeyInfo& k) { return k.when_set; });
  CHECK(when_set == 16);
  const auto columns = key_columns(set_in(grid.configs));
  CHECK(std::ptrdiff_t(columns.size()) == std::ptrdiff_t(config_keys().size()) - 1 - when_set);
  CHECK(key_columns(named_in({"base_width"})).size() == columns.size() + 1);
  CHECK(std::find(columns.begin(), columns.end(), "metrics") == columns.end());
  CHECK(columns.front() == "placement");
  const std::string pre = csv_key_fields(grid, 0, columns), post = csv_key_fields(grid, 1, columns);
  CHECK(pre.starts_with("0,pre,mlp,layernorm,"));
  CHECK(post.starts_with("1,post,mlp,"));
  CHECK(pre.find(",16,16,2,") != std::string::npos);  // width 16, tokens 16, depth 2

  const auto layers = lines(read_text(dir / "layers.csv"));
  REQUIRE(layers.size() == 1 + 5 + 3 + 10);
  CHECK(layers[0].starts_with("config,placement,sublayer,norm,"));
  CHECK(layers[0].ends_with(",samples,precision,recompute,sample,metric,l,k,value"));
  CHECK(layers[1] == pre + "0,act_sq,0,,1");
  CHECK(layers[6] == pre + "1,act_sq,0,,3");
  CHECK(layers[7] == pre + "1,act_sq,2,,5");      // l = 1 was NaN: left out
  CHECK(layers[8] == pre + "1,cos_next,,0,0.5");  // k = 1 was Inf: left out
  CHECK(layers[9] == post + "0,act_sq,0,,1");

  const auto summary = lines(read_text(dir / "summary.csv"));
  CHECK(summary[0].ends_with(",recompute,metric,l,k,mean,se,n"));
  CHECK(summary[1] == pre + "act_sq,0,,2,1,2");  // (1, 3): sd sqrt(2), se 1
  CHECK(summary[2] == pre + "act_sq,1,,2,0,1");
  CHECK(summary[3] == pre + "act_sq,2,,4,1,2");
  CHECK(summary[4] == pre + "cos_next,,0,0.5,0,2");
  CHECK(summary[5] == pre + "cos_next,,1,0.25,0,1");
  CHECK(summary.size() == 1 + 5 + 5);
  for (const auto& file : {"layers.csv", "summary.csv"}) {
    const std::string text = read_text(dir / file);
    CHECK(text.find("nan") == std::string::npos);
    CHECK(text.find("inf") == std::string::npos);
  }
  CHECK(read_text(dir / "nonfinite.csv") == "config,sample,pass,layer,metric\n");
}

TEST_CASE("numbers round-trip exactly") {
  ScratchDir dir("roundtrip");
  const Grid grid = parse_grid("depth = 2\n", "g.toml");
  const double x = 0.1 + 0.2, y = 1.0 / 3.0, z = 6.02214076e-23;
  GridRecords records{{hand_record(0, x, y, z, 1, 1)}};
  write_layers_csv(dir / "layers.csv", grid, records);
  const auto rows = lines(read_text(dir / "layers.csv"));
  const auto value = [&](int row) { return std::stod(rows[row].substr(rows[row].rfind(',') + 1)); };
  CHECK(value(1) == x);
  CHECK(value(2) == y);
  CHECK(value(3) == z);
}

// A float config value is a column of layers.csv and summary.csv too: 1.9e19 once came out as
// 19016889231223029760, which pandas reads as text (issue 30). Config values take io::format_number's rule.
TEST_CASE("config values are written as numbers any CSV reader reads back as the same double") {
  for (const double x : {1.901688923122303e19, 1e15, 1e22, 0.1, 5e-324, -0.0, 3.0})
    CHECK(std::strtod(format_value(KeyValue{x}).c_str(), nullptr) == x);  // strtod: stod throws on subnormals
  CHECK(format_value(KeyValue{1.901688923122303e19}) == "1.901688923122303e+19");
  CHECK(format_toml(KeyValue{1e22}) == "1e+22");
  CHECK(format_toml(KeyValue{3.0}) == "3.0");
  CHECK(format_value(KeyValue{-0.0}) == "-0");  // strtod("0") == -0.0 as well: the sign checked by its text
}

TEST_CASE("run.json holds the contract's fields") {
  const Grid grid = parse_grid("depth = [2, 4]\n", "exp/g.toml");
  RunInfo info;
  info.backend = "fake";
  info.threads = 3;
  info.started = utc_now_iso8601();
  info.config_seconds = {0.5, 0.25};
  const auto j = run_json(grid, info);
  for (const char* key : {"normsim_version", "git_commit", "threads", "backend", "device", "started",
                          "timings", "config_file", "swept_keys", "configs", "metrics", "peak_memory_bytes"})
    CHECK(j.contains(key));
  CHECK(j["config_file"] == "exp/g.toml");
  CHECK(j["swept_keys"] == nlohmann::ordered_json::array({"depth"}));
  CHECK(j["configs"].size() == 2);
  CHECK(j["configs"][1]["id"] == 1);
  CHECK(j["configs"][1]["values"]["depth"] == 4);
  CHECK(j["configs"][1]["values"]["placement"] == "pre");
  CHECK(j["configs"][1]["seed"] == 0);
  CHECK(j["timings"]["total_seconds"] == 0.75);
  CHECK(j["metrics"]["act_sq"].is_string());
  CHECK(std::string(j["started"]).size() == 20);  // 2025-01-31T12:00:00Z
}
