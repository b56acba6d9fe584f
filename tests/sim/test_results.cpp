// Result files on hand-made records: summary statistics, column layout, no NaN or Inf in any file, and
// atomic writes that leave no temp files.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sim/atomic_file.hpp"
#include "sim/config_file.hpp"
#include "sim/config_schema.hpp"
#include "sim/csv.hpp"
#include "sim/metrics.hpp"
#include "sim/results.hpp"
#include "test_util.hpp"

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
  write_nonfinite_csv(dir / "nonfinite.csv", records);

  // Every key is a column, swept or not, placement first: the files of different runs concatenate. The one
  // list of names, `metrics`, is not: it says which rows exist.
  CHECK(key_columns().size() == config_keys().size() - 1);
  const auto columns = key_columns();
  CHECK(std::find(columns.begin(), columns.end(), "metrics") == columns.end());
  CHECK(key_columns().front() == "placement");
  const std::string pre = csv_key_fields(grid, 0), post = csv_key_fields(grid, 1);
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

TEST_CASE("atomic writes leave only the final file") {
  ScratchDir dir("atomic");
  write_file_atomic(dir / "a.txt", "first");
  write_file_atomic(dir / "a.txt", "second");
  CHECK(read_text(dir / "a.txt") == "second");
  {
    AtomicFile abandoned(dir / "b.txt");
    abandoned.write("never committed");
  }
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) names.push_back(e.path().filename());
  CHECK(names == std::vector<std::string>{"a.txt"});
  CHECK(is_atomic_temp("x/layers.csv.tmp.1234"));
  CHECK(!is_atomic_temp("x/layers.csv"));
  CHECK(!is_atomic_temp("x/a.tmp.b"));
}

TEST_CASE("an atomic write into a missing folder fails loudly") {
  CHECK_THROWS_WITH(write_file_atomic("/nonexistent-normsim/x.csv", "x"),
                    Catch::Contains("/nonexistent-normsim"));
}

// Issue 30: every number normsim writes reads back as the same double, in any CSV reader: strtod gives the
// same bits, and no field is a bare integer of 16 or more digits (read as an integer, or past int64 as a
// string, by pandas). Powers of ten and their neighbours from the smallest subnormal to the largest
// double, the 1e18-1e22 integers the issue found, and 10^5 random bit patterns (fixed seed).
TEST_CASE("format_number: shortest text that reads back as the same double, never a long integer") {
  std::vector<double> xs = {0.0,
                            -0.0,
                            1.0,
                            -1.0,
                            0.1,
                            1e15,
                            1e16 - 2,
                            19016889231223029760.0,
                            1e22,
                            9.5e21,
                            std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::min(),
                            std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::lowest()};
  for (int e = -324; e <= 308; ++e) {
    const double p = std::pow(10.0, e);
    xs.insert(xs.end(), {p, std::nextafter(p, 0.0), std::nextafter(p, HUGE_VAL), -p});
  }
  std::mt19937_64 gen(30);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t bits = gen();
    double x;
    std::memcpy(&x, &bits, sizeof x);
    if (std::isfinite(x)) xs.push_back(x);
  }
  std::size_t bad = 0;
  for (const double x : xs) {
    const std::string s = format_number(x);
    const double back = std::strtod(s.c_str(), nullptr);
    const std::size_t digits = s.size() - (s[0] == '-' ? 1 : 0);
    const bool long_integer = s.find_first_of(".eEni") == std::string::npos && digits >= 16;
    if (std::memcmp(&back, &x, sizeof x) != 0 || long_integer) {
      if (++bad <= 5) UNSCOPED_INFO(x << " written as " << s);
    }
  }
  CHECK(bad == 0);
  CHECK(format_number(19016889231223029760.0) == "1.901688923122303e+19");
  CHECK(format_number(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(format_number(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(format_number(12345.0) == "12345");  // short integers stay as they are
}
