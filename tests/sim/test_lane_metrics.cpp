// Per-lane metrics and the conditional `lane` column (docs/design/multistream.md 3.3, step S3): every lane's
// stream and pair metrics beside the lanes' mean, lane_cos, the rows of layers.csv and summary.csv, and
// part files that keep the lanes. Float64 on the CPU backend, where HC's init identities are exact.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "io/csv_read.hpp"
#include "sim/cpu/cpu_backend.hpp"
#include "sim/metrics.hpp"
#include "sim/run/config_file.hpp"
#include "sim/run/part_file.hpp"
#include "sim/run/results.hpp"
#include "test_util.hpp"

using namespace normsim::sim;
using normsim::test::read_text;
using normsim::test::ScratchDir;

namespace {

using LaneValues = std::vector<std::vector<std::vector<double>>>;
// Whether a part file gave back the same lane values: the same numbers, NaN (a metric the run did not
// measure, a costly one not asked for) matching NaN.
bool same_lane_values(const LaneValues& a, const LaneValues& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].size() != b[i].size()) return false;
    for (std::size_t m = 0; m < a[i].size(); ++m) {
      if (a[i][m].size() != b[i][m].size()) return false;
      for (std::size_t j = 0; j < a[i][m].size(); ++j)
        if (!(a[i][m][j] == b[i][m][j] || (std::isnan(a[i][m][j]) && std::isnan(b[i][m][j])))) return false;
    }
  }
  return true;
}

// Pre-LN, static HC at the official init (n = 2: identity mixing, branch reads lane k mod 2, beta 1;
// lucidrains/hyper-connections hyper_connections.py @4775103 l.215, 229-232, 242) and a mixing that is not
// the identity (row sums 1.5 and 1: equal lanes become unequal).
constexpr const char* kHcInit = "[[1,0],[0,1]] @ x + [1,1] * F(N(k - 2*floor(k/2) < 1 ? x[0] : x[1]))";
constexpr const char* kMixed = "[[1,0.5],[0,1]] @ x + [1,1] * F(N(x[0]))";

Grid lanes_grid(const std::string& blocks) {
  return parse_grid("placement = \"custom\"\nblock = [" + blocks +
                        "]\nsublayer = \"mlp\"\nactivation = \"gelu\"\ndepth = 6\nwidth = 12\ntokens = 5\n"
                        "samples = 3\nprecision = \"float64\"\nseed = 7\n",
                    "lanes.toml");
}

GridRecords run_grid(const Grid& g) {
  GridRecords records;
  for (const Config& c : g.configs) records.push_back(CpuBackend(1).run(c, std::vector<int>{0, 1, 2}));
  return records;
}

const std::vector<double>& lane_values(const SampleRecord& r, int lane, int metric) {
  return r.lanes[std::size_t(lane)][std::size_t(metric)];
}

}  // namespace

// A grid of one stream writes the header it wrote before lanes existed (tests/sim/test_parametrization.cpp
// golden_headers_unchanged pins every key); one with a block of lanes adds `lane` after `k`, in all three
// tables, whatever else the grid holds.
TEST_CASE("csv_header_unchanged_single_lane") {
  const Grid one = parse_grid("placement = [\"pre\", \"post\"]\ndepth = 4\n", "one.toml");
  CHECK_FALSE(has_lanes(one.configs));
  for (const ResultTable t : {ResultTable::layers, ResultTable::summary, ResultTable::theory})
    CHECK(csv_header(t, one.configs).find("lane") == std::string::npos);
  const Grid mixed = lanes_grid("\"x + F(N(x))\", \"" + std::string(kHcInit) + "\"");
  CHECK(has_lanes(mixed.configs));
  CHECK(csv_header(ResultTable::layers, mixed.configs).ends_with(",sample,metric,l,k,lane,value\n"));
  CHECK(csv_header(ResultTable::summary, mixed.configs).ends_with(",metric,l,k,lane,mean,se,n\n"));
  CHECK(csv_header(ResultTable::theory, mixed.configs).ends_with(",metric,l,k,lane,value\n"));
}

// At HC's official init every lane is Pre-LN's stream bit for bit (tests/sim/test_lanes.cpp), so each lane's
// forward metrics are Pre-LN's exactly and lane_cos is 1 up to rounding (a cosine of equal rows: 1e-15).
// Gradients: the readout is the lanes' sum, so at x_K every lane's gradient is the mean's / n (grad_sq / n^2
// exactly: a power of 2); a lane the branch does not read passes its gradient on unchanged (lane 1 at
// sublayer 0, k mod 2 = 0), which holds only if x_0's copies are Values of their own.
TEST_CASE("per-lane metrics at HC's official init") {
  const Grid g = lanes_grid("\"x + F(N(x))\", \"" + std::string(kHcInit) + "\"");
  const GridRecords rec = run_grid(g);
  const int K = g.configs[0].depth;
  for (std::size_t s = 0; s < rec[1].size(); ++s) {
    const SampleRecord &pre = rec[0][s], &hc = rec[1][s];
    REQUIRE(pre.lanes.empty());
    REQUIRE(hc.lanes.size() == 2);
    for (const int m : {metric::act_sq, metric::act_mean_abs, metric::act_max_abs, metric::token_cos,
                        metric::eff_rank, metric::cos_next, metric::rel_update})
      for (int lane = 0; lane < 2; ++lane) CHECK(lane_values(hc, lane, m) == pre.values[std::size_t(m)]);
    for (int l = 0; l <= K; ++l)
      CHECK(hc.values[metric::lane_cos][std::size_t(l)] == Approx(1).margin(1e-14));
    CHECK(std::isnan(pre.values[metric::lane_cos][0]));  // one stream: no lane_cos
    const double mean_K = hc.values[metric::grad_sq][std::size_t(K)];
    for (int lane = 0; lane < 2; ++lane)
      CHECK(lane_values(hc, lane, metric::grad_sq)[std::size_t(K)] == Approx(mean_K / 4).epsilon(1e-14));
    CHECK(lane_values(hc, 1, metric::grad_sq)[0] == lane_values(hc, 1, metric::grad_sq)[1]);
    CHECK(lane_values(hc, 0, metric::grad_sq)[0] != lane_values(hc, 0, metric::grad_sq)[1]);
  }
}

// The lucidrains issue-8 regression (the residual mixing silently not applied, invisible at HC's identity
// init): a mixing with unequal row sums makes equal lanes unequal, so lane_cos leaves 1 from x_1 on, by far
// more than rounding (1e-6 against 1e-15), while the identity keeps it at 1 (above).
TEST_CASE("lane_cos below 1 under a non-identity mixing") {
  const GridRecords rec = run_grid(lanes_grid("\"" + std::string(kMixed) + "\""));
  for (const SampleRecord& r : rec[0]) {
    CHECK(r.values[metric::lane_cos][0] == Approx(1).margin(1e-14));  // x_0's lanes are copies
    for (std::size_t l = 1; l < r.values[metric::lane_cos].size(); ++l)
      CHECK(r.values[metric::lane_cos][l] < 1 - 1e-6);
    CHECK(lane_values(r, 0, metric::act_sq)[1] >
          lane_values(r, 1, metric::act_sq)[1]);  // 1.5 x_0 + F vs x_0 + F
  }
}

// layers.csv and summary.csv of a grid with lanes: the `lane` field is empty on Pre-LN's rows and on the
// metrics not of the lanes (branch_sq, gradw_*, lane_cos), `mean` then 0, 1 on the per-lane metrics, each
// value as the records hold it; a part file brings the lanes back exactly.
TEST_CASE("csv_lane_rows") {
  const Grid g = lanes_grid("\"x + F(N(x))\", \"" + std::string(kHcInit) + "\"");
  const GridRecords rec = run_grid(g);
  ScratchDir dir("lane-rows");
  write_layers_csv(dir / "layers.csv", g, rec);
  write_summary_csv(dir / "summary.csv", g, rec);
  const normsim::io::CsvTable layers = normsim::io::read_csv(dir / "layers.csv");
  const int config = layers.require("config"), sample = layers.require("sample"),
            metric = layers.require("metric"), l = layers.require("l"), k = layers.require("k"),
            lane = layers.require("lane"), value = layers.require("value");
  CHECK(lane == k + 1);
  std::size_t lane_rows = 0;
  for (std::size_t i = 0; i < layers.rows.size(); ++i) {
    const auto& row = layers.rows[i];
    const int m = metric_id(row[std::size_t(metric)]);
    const std::string& field = row[std::size_t(lane)];
    INFO(layers.where(i));
    if (row[std::size_t(config)] == "0" || !of_lanes_mean(m)) {
      CHECK(field.empty());
      continue;
    }
    const SampleRecord& r = rec[1][std::stoul(row[std::size_t(sample)])];
    const std::size_t at = std::stoul(row[std::size_t(row[std::size_t(l)].empty() ? k : l)]);
    const double v = normsim::io::parse_number(layers, i, value);
    if (field == "mean") {
      CHECK(v == r.values[std::size_t(m)][at]);
    } else {
      ++lane_rows;
      CHECK(v == lane_values(r, std::stoi(field), m)[at]);
    }
  }
  CHECK(lane_rows > 0);
  const std::string summary = read_text(dir / "summary.csv");
  CHECK(summary.find(",act_sq,0,,mean,") != std::string::npos);
  CHECK(summary.find(",act_sq,0,,1,") != std::string::npos);
  CHECK(summary.find(",lane_cos,3,,,1,") != std::string::npos);
  const UnitResult unit{Unit{1, 0, 3}, rec[1], 0.5};
  const UnitResult back = decode_unit(encode_unit(unit, 42), unit.unit, 42, "part");
  for (std::size_t s = 0; s < rec[1].size(); ++s)
    CHECK(same_lane_values(back.records[s].lanes, rec[1][s].lanes));
}

// Lanes and training steps together (sim/cpu/train_loop.hpp): both optional columns, `step` then `lane`, in
// all three tables; every finite value of every (sample, step, lane) record is one layers.csv row holding it
// exactly, summary.csv's rows are the samples' mean of one step and lane, and a part file (format 3) brings
// steps and lanes back exactly.
TEST_CASE("csv_lanes_and_steps") {
  const Grid g =
      parse_grid("placement = \"custom\"\nblock = [\"x + F(N(x))\", \"" + std::string(kMixed) +
                     "\"]\nsublayer = \"mlp\"\nactivation = \"gelu\"\ndepth = 3\nwidth = 8\n"
                     "tokens = 3\nsamples = 3\nprecision = \"float64\"\nseed = 7\nupdate = \"sgd\"\n"
                     "steps = 2\n",
                 "lanes-steps.toml");
  const std::string header = ",metric,l,k,step,lane,";
  for (const ResultTable t : {ResultTable::layers, ResultTable::summary, ResultTable::theory})
    CHECK(csv_header(t, g.configs).find(header) != std::string::npos);
  const GridRecords rec = run_grid(g);
  REQUIRE(rec[1].size() == 9);  // 3 samples x steps 0..2
  std::size_t finite = 0;
  for (const auto& records : rec)
    for (const SampleRecord& r : records)
      for (std::size_t m = 0; m < r.values.size(); ++m) {
        for (double v : r.values[m]) finite += std::isfinite(v);
        for (const auto& lane : r.lanes)
          for (double v : lane[m]) finite += std::isfinite(v);
      }
  ScratchDir dir("lane-step-rows");
  write_layers_csv(dir / "layers.csv", g, rec);
  write_summary_csv(dir / "summary.csv", g, rec);
  const normsim::io::CsvTable layers = normsim::io::read_csv(dir / "layers.csv");
  const int config = layers.require("config"), sample = layers.require("sample"),
            metric = layers.require("metric"), l = layers.require("l"), k = layers.require("k"),
            step = layers.require("step"), lane = layers.require("lane"), value = layers.require("value");
  CHECK((step == k + 1 && lane == k + 2));
  CHECK(layers.rows.size() == finite);
  std::size_t later_lane_rows = 0;
  for (std::size_t i = 0; i < layers.rows.size(); ++i) {
    const auto& row = layers.rows[i];
    INFO(layers.where(i));
    const auto& records = rec[std::stoul(row[std::size_t(config)])];
    const std::size_t s = std::stoul(row[std::size_t(sample)]), t = std::stoul(row[std::size_t(step)]);
    const SampleRecord& r = records[3 * s + t];  // each sample's steps in order
    REQUIRE((r.sample == int(s) && r.step == int(t)));
    const auto m = std::size_t(metric_id(row[std::size_t(metric)]));
    const std::size_t at = std::stoul(row[std::size_t(row[std::size_t(l)].empty() ? k : l)]);
    const std::string& field = row[std::size_t(lane)];
    const bool one_lane = !field.empty() && field != "mean";
    if (one_lane) later_lane_rows += t > 0;
    const double want = one_lane ? lane_values(r, std::stoi(field), int(m))[at] : r.values[m][at];
    CHECK(normsim::io::parse_number(layers, i, value) == want);
  }
  CHECK(later_lane_rows > 0);
  // summary.csv: lane 1's act_sq at x_3 after step 2, the mean over the 3 samples' values.
  double sum = 0;
  for (int s = 0; s < 3; ++s) sum += lane_values(rec[1][std::size_t(3 * s + 2)], 1, metric::act_sq)[3];
  const normsim::io::CsvTable summary = normsim::io::read_csv(dir / "summary.csv");
  const int sc = summary.require("config"), sm = summary.require("metric"), sl = summary.require("l"),
            st = summary.require("step"), sn = summary.require("lane"), mean = summary.require("mean");
  std::size_t found = 0;
  for (std::size_t i = 0; i < summary.rows.size(); ++i) {
    const auto& row = summary.rows[i];
    if (row[std::size_t(sc)] == "1" && row[std::size_t(sm)] == "act_sq" && row[std::size_t(sl)] == "3" &&
        row[std::size_t(st)] == "2" && row[std::size_t(sn)] == "1") {
      ++found;
      CHECK(normsim::io::parse_number(summary, i, mean) == Approx(sum / 3).epsilon(1e-14));
    }
  }
  CHECK(found == 1);
  const UnitResult unit{Unit{1, 0, 3}, rec[1], 0.5};
  const UnitResult back = decode_unit(encode_unit(unit, 42), unit.unit, 42, "part");
  REQUIRE(back.records.size() == rec[1].size());
  for (std::size_t i = 0; i < rec[1].size(); ++i) {
    CHECK(back.records[i].step == rec[1][i].step);
    CHECK(same_lane_values(back.records[i].lanes, rec[1][i].lanes));
  }
}
