// The training loop's rules (sim/training_loop.hpp), on a scripted device: which passes run, which records
// hold a value, and when the optimizer steps, whatever device runs them (the CPU's one sample, the CUDA
// backend's batch).
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "sim/config.hpp"
#include "sim/metrics.hpp"
#include "sim/stack.hpp"
#include "sim/training_loop.hpp"

namespace {

using normsim::sim::SampleRecord;

// S samples whose pass of step s is finite unless s reaches the sample's `fails_at`. A record carries its
// step as act_sq at l = 0, so a record the loop made up instead (no value) shows as NaN there.
struct ScriptedDevice {
  std::vector<int> fails_at;  // per sample: the first step whose pass is not finite (past the steps: never)
  std::vector<int> passes, records;
  int steps_taken = 0, last_pass = -1;

  int samples() const { return int(fails_at.size()); }
  void run_step(int s) { passes.push_back(s), last_pass = s; }
  SampleRecord record(int i, int s) {
    records.push_back(i);
    SampleRecord r;
    r.sample = 10 + i;
    r.values.assign(normsim::sim::metric_table().size(), std::vector<double>(1, double(s)));
    return r;
  }
  bool trained(int i) const { return last_pass < fails_at[std::size_t(i)]; }
  void step() { ++steps_taken; }
};

double act_sq(const SampleRecord& r) {
  const auto& v = r.values[std::size_t(normsim::sim::metric::act_sq)];
  return v.empty() ? NAN : v[0];
}

}  // namespace

TEST_CASE("training loop: a sample whose pass is not finite ends there, the others go on", "[training]") {
  normsim::sim::Config c;
  c.depth = 2;
  const normsim::sim::StackShape shape(c);
  ScriptedDevice device{{99, 1, 2}, {}, {}};  // sample 0 trains throughout, 1 fails at step 1, 2 at step 2
  const int samples[] = {10, 11, 12};
  const auto records = normsim::sim::run_training(device, 3, shape, samples);
  REQUIRE(records.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    REQUIRE(records[i].size() == 4);
    for (int s = 0; s <= 3; ++s) CHECK(records[i][std::size_t(s)].step == s);
  }
  // Sample 0: every step measured. Sample 1: steps 0 and 1 (its failing step is recorded), then none.
  // Sample 2: steps 0-2, then none. The made-up records carry their sample and no value.
  for (int s = 0; s <= 3; ++s) CHECK(act_sq(records[0][std::size_t(s)]) == s);
  CHECK(act_sq(records[1][1]) == 1);
  CHECK(std::isnan(act_sq(records[1][2])));
  CHECK(act_sq(records[2][2]) == 2);
  CHECK(std::isnan(act_sq(records[2][3])));
  CHECK(records[2][3].sample == 12);
  CHECK(device.passes == std::vector<int>{0, 1, 2, 3});
  CHECK(device.steps_taken == 3);  // after steps 0, 1 and 2; none after the last
  CHECK(device.records == std::vector<int>{0, 1, 2, 0, 1, 2, 0, 2, 0});
}

TEST_CASE("training loop: no pass and no step once no sample trains", "[training]") {
  normsim::sim::Config c;
  c.depth = 2;
  const normsim::sim::StackShape shape(c);
  ScriptedDevice device{{1, 0}, {}, {}};
  const int samples[] = {10, 11};
  const auto records = normsim::sim::run_training(device, 4, shape, samples);
  CHECK(device.passes == std::vector<int>{0, 1});  // at step 1 sample 0 fails too; steps 2-4 run nothing
  CHECK(device.steps_taken == 1);                  // after step 0, while sample 0 trained
  for (const auto& r : records) {
    REQUIRE(r.size() == 5);
    CHECK(std::isnan(act_sq(r[4])));
  }
}
