// The MPI driver's pure pieces, without MPI: the LPT schedule, the cost model, the messages (exact), and
// reading the launcher's environment.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "mpi/launch.hpp"
#include "mpi/messages.hpp"
#include "mpi/schedule.hpp"
#include "tests/sim/test_util.hpp"

using namespace normsim;
using normsim::test::same_bits;

namespace {

// Sets (or unsets, with nullopt) an environment variable for one scope.
class EnvVar {
 public:
  EnvVar(std::string name, std::optional<std::string> value) : name_(std::move(name)) {
    if (const char* v = std::getenv(name_.c_str())) old_ = v;
    if (value)
      ::setenv(name_.c_str(), value->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ~EnvVar() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("LPT gives the costliest unit first to the least loaded rank, ties to the lower rank") {
  const std::vector<double> costs{4, 7, 2, 6, 3, 5};
  // By cost: 7(1) r0, 6(3) r1, 5(5) r1 (6 < 7), 4(0) r0 (7 < 11), 3(4) r0 (11 = 11: lower rank), 2(2) r1.
  const auto s = mpi::lpt_schedule(costs, 2);
  REQUIRE(s.size() == 2);
  CHECK(s[0] == std::vector<int>{1, 0, 4});
  CHECK(s[1] == std::vector<int>{3, 5, 2});
}

TEST_CASE("LPT assigns every unit exactly once, deterministically, and within 4/3 of the optimum") {
  std::vector<double> costs;
  for (int i = 0; i < 97; ++i) costs.push_back(1 + (i * 37) % 11 + (i % 3 == 0 ? 20 : 0));
  for (int ranks : {1, 2, 3, 8, 200}) {
    INFO(ranks);
    const auto s = mpi::lpt_schedule(costs, ranks);
    CHECK(s == mpi::lpt_schedule(costs, ranks));
    std::vector<int> seen(costs.size(), 0);
    double total = 0, makespan = 0, biggest = 0;
    for (const auto& share : s) {
      double load = 0;
      for (int u : share) {
        ++seen[static_cast<std::size_t>(u)];
        load += costs[static_cast<std::size_t>(u)];
      }
      makespan = std::max(makespan, load);
    }
    for (double c : costs) total += c, biggest = std::max(biggest, c);
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    const double lower_bound = std::max(total / ranks, biggest);  // no schedule beats this
    CHECK(makespan <= 4.0 / 3.0 * lower_bound + 1e-9);
  }
  CHECK(mpi::lpt_schedule({}, 3) == std::vector<std::vector<int>>(3));
  CHECK_THROWS(mpi::lpt_schedule(costs, 0));
}

TEST_CASE("the cost model grows with the work of a sample") {
  sim::Config c;
  c.width = 64;
  c.tokens = 16;
  c.depth = 8;
  const double base = mpi::sample_cost(c);
  auto wider = c;
  wider.width = 128;
  CHECK(mpi::sample_cost(wider) > 3.5 * base);  // ~ d^2
  auto deeper = c;
  deeper.depth = 16;
  CHECK(mpi::sample_cost(deeper) == Approx(2 * base).epsilon(0.1));
  auto f64 = c;
  f64.precision = normsim::vocab::Precision::float64;
  CHECK(mpi::sample_cost(f64) == Approx(2 * base));
  auto attention = c, transformer = c;
  attention.sublayer = normsim::vocab::Sublayer::attention;
  transformer.sublayer = normsim::vocab::Sublayer::transformer;
  CHECK(mpi::sample_cost(transformer) == Approx((mpi::sample_cost(attention) + base) / 2).epsilon(1e-9));
  auto swiglu = c;
  swiglu.activation = normsim::vocab::Activation::swiglu;
  CHECK(mpi::sample_cost(swiglu) > base);

  sim::Grid grid;
  grid.configs = {c, wider};
  CHECK(mpi::unit_cost(grid, {1, 2, 5}) == Approx(3 * mpi::sample_cost(wider)));
}

// The driver sends units as sim::encode_unit's text (the part-file format); the files rank 0 writes are
// byte-equal to one process's only if that text round-trips every double exactly.
TEST_CASE("a unit survives the message bit for bit, signed zeros and extremes included") {
  sim::UnitResult u;
  u.unit = {12, 4, 7};
  u.seconds = 0.1 + 1e-17;
  const std::vector<double> odd{0.1,
                                -0.0,
                                std::numeric_limits<double>::denorm_min(),
                                std::numeric_limits<double>::max(),
                                -std::numeric_limits<double>::infinity(),
                                std::numeric_limits<double>::quiet_NaN(),
                                1.0 / 3.0,
                                std::nextafter(1.0, 2.0)};
  for (int s = 4; s < 7; ++s) {
    sim::SampleRecord r;
    r.sample = s;
    r.values = {odd, {}, {double(s) * 1e-300}};
    if (s == 5) r.nonfinite = sim::NonFinite{"backward", 3};
    u.records.push_back(r);
  }
  const sim::UnitResult back = sim::decode_unit(sim::encode_unit(u, 42), u.unit, 42, "test");
  CHECK(back.unit == u.unit);
  CHECK(same_bits(back.seconds, u.seconds));
  REQUIRE(back.records.size() == u.records.size());
  for (std::size_t i = 0; i < u.records.size(); ++i) {
    const auto &a = u.records[i], &b = back.records[i];
    CHECK(a.sample == b.sample);
    CHECK(a.nonfinite.has_value() == b.nonfinite.has_value());
    if (a.nonfinite) {
      CHECK(a.nonfinite->pass == b.nonfinite->pass);
      CHECK(a.nonfinite->layer == b.nonfinite->layer);
    }
    REQUIRE(a.values.size() == b.values.size());
    for (std::size_t m = 0; m < a.values.size(); ++m) {
      REQUIRE(a.values[m].size() == b.values[m].size());
      for (std::size_t k = 0; k < a.values[m].size(); ++k) {
        INFO(a.values[m][k]);
        CHECK((std::isnan(a.values[m][k]) ? std::isnan(b.values[m][k])
                                          : same_bits(a.values[m][k], b.values[m][k])));
      }
    }
  }
}

TEST_CASE("a rank report survives the message") {
  mpi::RankReport r{mpi::FailureKind::backend,
                    "rank 3 on n1: no GPU",
                    "n1",
                    "cpu",
                    "CUDA_VISIBLE_DEVICES=1",
                    5,
                    2.5,
                    1 << 20,
                    3 << 20};
  const std::string text = mpi::encode_report(r);
  const auto back = mpi::decode_report(text);
  CHECK(back.failure == r.failure);
  CHECK(back.message == r.message);
  CHECK(back.host == r.host);
  CHECK(back.backend == r.backend);
  CHECK(back.device == r.device);
  CHECK(back.units == r.units);
  CHECK(back.seconds == r.seconds);
  CHECK(back.peak_memory_bytes == r.peak_memory_bytes);
  CHECK(back.peak_rss_bytes == r.peak_rss_bytes);
  // Damaged reports are refused, never misread.
  for (std::size_t n = 0; n < text.size(); n += 7)
    CHECK_THROWS_WITH(mpi::decode_report(text.substr(0, n)), Catch::Contains("damaged report"));
  CHECK_THROWS_WITH(mpi::decode_report(R"({"format": "normsim-rank-report 2"})"), Catch::Contains("format"));
}

TEST_CASE("launched with ranks: only when a launcher says there are several") {
  EnvVar a("OMPI_COMM_WORLD_SIZE", std::nullopt), b("PMI_SIZE", std::nullopt), c("PMIX_SIZE", std::nullopt),
      d("SLURM_STEP_NUM_TASKS", std::nullopt);
  CHECK_FALSE(mpi::launched_with_ranks());
  {
    EnvVar one("OMPI_COMM_WORLD_SIZE", "1");
    CHECK_FALSE(mpi::launched_with_ranks());
  }
  {
    EnvVar two("OMPI_COMM_WORLD_SIZE", "2");
    CHECK(mpi::launched_with_ranks());
  }
  {
    EnvVar four("PMI_SIZE", "4");
    CHECK(mpi::launched_with_ranks());
  }
  {
    EnvVar junk("SLURM_STEP_NUM_TASKS", "2(x3)");
    CHECK_FALSE(mpi::launched_with_ranks());
  }
}

TEST_CASE("each rank on a node sees one GPU of those it was given") {
  {
    EnvVar visible("CUDA_VISIBLE_DEVICES", "3,5,GPU-abc");
    CHECK(mpi::bind_gpu(4) == "CUDA_VISIBLE_DEVICES=5 (of 3,5,GPU-abc)");
    CHECK(std::string(std::getenv("CUDA_VISIBLE_DEVICES")) == "5");
  }
  {
    EnvVar visible("CUDA_VISIBLE_DEVICES", "2");  // the cluster bound one GPU already
    CHECK(mpi::bind_gpu(1) == "CUDA_VISIBLE_DEVICES=2 (given)");
    CHECK(std::string(std::getenv("CUDA_VISIBLE_DEVICES")) == "2");
  }
  {
    EnvVar visible("CUDA_VISIBLE_DEVICES", "");  // no GPU at all
    CHECK(mpi::bind_gpu(0).empty());
  }
}
