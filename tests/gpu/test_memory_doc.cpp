// docs/gpu.md's memory table is the planner's formula (gpu/memory_plan.hpp) evaluated, not arithmetic
// done by hand: every row is recomputed here and must match to the digits printed.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>
#include "vocab/names.hpp"

#include "bench/workloads.hpp"
#include "gpu/memory_plan.hpp"
#include "sim/stack.hpp"

namespace {

std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::stringstream in(row);
  std::string cell;
  std::getline(in, cell, '|');  // before the first bar
  while (std::getline(in, cell, '|')) {
    const auto a = cell.find_first_not_of(' '), b = cell.find_last_not_of(' ');
    out.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
  }
  return out;
}

std::string gigabytes(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", bytes / 1e9);
  return buf;
}

}  // namespace

// Columns: sublayer | width | depth | tokens | weights kept | recompute scratch | whole tape | statistics |
// auto plan | samples per batch (float32, GB = 1e9 bytes per sample; the plan for 64 samples on 0.85 x 80 GB:
// "redraw" or "keep", and "checkpoint every N: X" with the checkpointed tape when the whole tape does not
// fit).
TEST_CASE("docs/gpu.md's memory table is the planner's", "[plan][docs]") {
  std::ifstream doc(NORMSIM_SOURCE_DIR "/docs/gpu.md");
  REQUIRE(doc);
  std::string line;
  bool in_table = false;
  int rows = 0;
  while (std::getline(doc, line)) {
    if (line.find("<!-- memory table: tests/gpu/test_memory_doc.cpp -->") != std::string::npos)
      in_table = true;
    if (!in_table || line.rfind("| ", 0) != 0 || line.find("---") != std::string::npos) continue;
    const auto c = cells(line);
    if (c.size() != 10 || c[0] == "sublayer") continue;
    normsim::sim::Config cfg;
    cfg.sublayer = normsim::vocab::find<normsim::vocab::Sublayer>(c[0]).value(), cfg.width = std::stoi(c[1]),
    cfg.depth = std::stoi(c[2]), cfg.tokens = std::stoi(c[3]);
    const normsim::sim::StackShape s(cfg);
    const double budget = 0.85 * 80e9;
    const auto keep =
        normsim::gpu::plan_memory(s, 4, normsim::vocab::Recompute::no, 1e18, 1);  // unlimited: the whole tape
    const auto redraw = normsim::gpu::plan_memory(s, 4, normsim::vocab::Recompute::yes, 1e18, 1);
    const auto plan = normsim::gpu::plan_memory(s, 4, normsim::vocab::Recompute::auto_, budget, 64);
    std::string how = plan.recompute ? "redraw" : "keep";
    if (plan.checkpoint_every > 0)
      how += ", checkpoint every " + std::to_string(plan.checkpoint_every) + ": " +
             gigabytes(plan.activation_bytes);
    const std::string fit = plan.per_sample_bytes() <= budget ? std::to_string(plan.batch_samples) : "0";
    INFO(line << "\nplanner: | " << c[0] << " | " << c[1] << " | " << c[2] << " | " << c[3] << " | "
              << gigabytes(keep.weight_bytes) << " | " << gigabytes(redraw.weight_bytes) << " | "
              << gigabytes(keep.activation_bytes) << " | " << gigabytes(keep.statistics_bytes) << " | " << how
              << " | " << fit << " |");
    CHECK(c[4] == gigabytes(keep.weight_bytes));
    CHECK(c[5] == gigabytes(redraw.weight_bytes));
    CHECK(c[6] == gigabytes(keep.activation_bytes));
    CHECK(c[7] == gigabytes(keep.statistics_bytes));
    CHECK(c[8] == how);
    CHECK(c[9] == fit);
    ++rows;
  }
  CHECK(rows >= 4);
}

// The benchmark's workloads are their documented definitions: the named keys, every other key default.
TEST_CASE("benchmark workloads W1 and W2 are their definitions", "[bench]") {
  namespace V = normsim::vocab;
  const normsim::sim::Config defaults;
  const auto w1 = normsim::bench::benchmark_workload("w1").config;
  const auto w2 = normsim::bench::benchmark_workload("w2").config;
  CHECK((w1.placement == V::Placement::pre && w1.sublayer == V::Sublayer::mlp &&
         w1.activation == V::Activation::gelu && w1.depth == 64 && w1.width == 512 && w1.mlp_ratio == 4 &&
         w1.tokens == 64 && w1.samples == 4 && w1.precision == normsim::vocab::Precision::float32));
  CHECK((w2.placement == V::Placement::pre && w2.sublayer == V::Sublayer::transformer && w2.width == 4096 &&
         w2.depth == 96 && w2.tokens == 512 && w2.samples == 8 &&
         w2.precision == normsim::vocab::Precision::float32));
  for (const auto* w : {&w1, &w2})
    CHECK((w->heads == defaults.heads && w->causal == defaults.causal && w->norm == defaults.norm &&
           w->seed == defaults.seed && w->loss == defaults.loss));
  CHECK(w2.activation == defaults.activation);
  CHECK(w2.mlp_ratio == defaults.mlp_ratio);
  // W1: 48 S T d^2 K (issue 2's count) = 206.2 GFLOP.
  CHECK(normsim::bench::benchmark_workload("w1").flops == Approx(48.0 * 4 * 64 * 512 * 512 * 64));
}
