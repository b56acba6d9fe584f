// The sweep engine with a fake backend: units, part files, resume after an interruption giving the same
// files as an uninterrupted run, refusal to write into a non-empty folder, NaN/Inf handling.
#include <catch2/catch.hpp>
#include <sstream>

#include "fake_backend.hpp"
#include "sim/run/sweep.hpp"
#include "tests/sim/test_util.hpp"

using namespace normsim::sim;
using normsim::test::FakeBackend;
using normsim::test::read_text;
using normsim::test::ScratchDir;

namespace {
const char* kGrid = "depth = [2, 3]\nplacement = [\"pre\", \"post\"]\nnorm_gain = 3.0\nsamples = 3\n";

SweepOptions options(const std::filesystem::path& out, int unit_samples = 2) {
  SweepOptions o;
  o.out = out;
  o.unit_samples = unit_samples;
  return o;
}

// run.json without what differs between two runs of the same grid (times, memory).
nlohmann::ordered_json stable_run_json(const std::filesystem::path& out) {
  auto j = nlohmann::ordered_json::parse(read_text(out / "run.json"));
  for (const char* k : {"started", "timings", "peak_memory_bytes", "peak_rss_bytes"}) j.erase(k);
  return j;
}

std::vector<std::string> listing(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    names.push_back(std::filesystem::relative(e.path(), dir).string());
  std::sort(names.begin(), names.end());
  return names;
}
}  // namespace

TEST_CASE("units cover every sample of every config once, in config order") {
  const Grid grid = parse_grid(kGrid, "g.toml");
  const auto units = make_units(grid, 2);
  REQUIRE(units.size() == 8);  // 4 configs x (samples 0-1, sample 2)
  CHECK(units[0] == Unit{0, 0, 2});
  CHECK(units[1] == Unit{0, 2, 3});
  CHECK(units[7] == Unit{3, 2, 3});
  CHECK(make_units(grid, 0).size() == 4);
  CHECK(make_units(grid, 5).size() == 4);
  CHECK(units[1].part_name() == "cfg-000000.s2-2.part");
  CHECK(make_units(grid, 0)[3].part_name() == "cfg-000003.s0-2.part");
}

TEST_CASE("a part file gives back exactly the records saved, NaN and nonfinite included") {
  ScratchDir dir("part");
  std::filesystem::create_directories(dir / "parts");
  const Grid grid = parse_grid(kGrid, "g.toml");
  FakeBackend backend;
  const Unit unit{1, 0, 3};  // depth 2, post: sample 1 blows up
  const UnitResult saved = run_unit(backend, grid, unit);
  REQUIRE(saved.records[1].nonfinite);
  const GridId id = grid_id(grid);
  save_part(dir.path(), saved, id);
  const auto loaded = load_part(dir.path(), unit, id);
  REQUIRE(loaded);
  REQUIRE(loaded->records.size() == 3);
  CHECK(loaded->seconds == saved.seconds);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto &a = saved.records[i], &b = loaded->records[i];
    CHECK(a.sample == b.sample);
    CHECK(a.nonfinite.has_value() == b.nonfinite.has_value());
    REQUIRE(a.values.size() == b.values.size());
    for (std::size_t m = 0; m < a.values.size(); ++m) {
      REQUIRE(a.values[m].size() == b.values[m].size());
      for (std::size_t l = 0; l < a.values[m].size(); ++l) {
        if (std::isnan(a.values[m][l]))
          CHECK(std::isnan(b.values[m][l]));
        else
          CHECK(a.values[m][l] == b.values[m][l]);
      }
    }
  }
  CHECK(loaded->records[1].nonfinite->pass == "forward");
  CHECK(loaded->records[1].nonfinite->layer == 2);
  CHECK_FALSE(load_part(dir.path(), Unit{2, 0, 3}, id));
  CHECK(encode_unit(*loaded, id) == encode_unit(saved, id));  // what a distributed driver sends
  CHECK_THROWS_WITH(decode_unit(encode_unit(saved, id), Unit{1, 0, 2}, id, "rank 3"),
                    Catch::Contains("rank 3:4") && Catch::Contains("sample range"));

  normsim::test::write_text(dir / "parts" / unit.part_name(), "normsim-part 1\nconfig 1\nsamples 0 3\n");
  CHECK_THROWS_WITH(load_part(dir.path(), unit, id), Catch::Contains("damaged unit records"));
}

TEST_CASE("an interrupted sweep, resumed, writes the same files as an uninterrupted one") {
  ScratchDir whole("whole"), cut("cut");
  const Grid grid = parse_grid(kGrid, "g.toml");
  std::ostringstream err;

  FakeBackend all;
  const auto report = run_sweep(grid, all, options(whole / "out"), err);
  CHECK(report.units_run == 8);
  CHECK(report.nonfinite_samples == 2);  // post at depth 2 and 3, sample 1

  SECTION("interrupted by a failing backend") {
    FakeBackend failing(3);
    CHECK_THROWS_WITH(run_sweep(grid, failing, options(cut / "out"), err), "fake backend interrupted");
    CHECK_FALSE(std::filesystem::exists(cut / "out" / "run.json"));
    CHECK_FALSE(std::filesystem::exists(cut / "out" / "layers.csv"));
  }
  SECTION("interrupted after some units, run one by one as a distributed driver would") {
    SweepOptions o = options(cut / "out");
    const int unit_samples = prepare_out(grid, o);
    FakeBackend some;
    const auto units = make_units(grid, unit_samples);
    for (std::size_t i = 0; i < units.size(); i += 2)
      save_part(o.out, run_unit(some, grid, units[i]), grid_id(grid));
  }

  SweepOptions resume = options(cut / "out", -1);  // the unit size comes from the stored grid
  resume.resume = true;
  FakeBackend rest;
  const auto second = run_sweep(grid, rest, resume, err);
  CHECK(second.units_resumed + second.units_run == 8);
  CHECK(second.units_resumed > 0);
  CHECK(rest.calls() == static_cast<int>(second.units_run));

  for (const char* file : {"layers.csv", "summary.csv", "nonfinite.csv"}) {
    INFO(file);
    CHECK(read_text(cut / "out" / file) == read_text(whole / "out" / file));
  }
  CHECK(stable_run_json(cut / "out") == stable_run_json(whole / "out"));
  for (const auto& name : listing(cut / "out")) CHECK(name.find(".tmp.") == std::string::npos);

  // Resuming a finished run runs nothing and rewrites nothing (its checkpoint is gone: run.json says it).
  CHECK_FALSE(std::filesystem::exists(cut / "out" / "parts"));
  FakeBackend none;
  const auto third = run_sweep(grid, none, resume, err);
  CHECK(third.units_run == 0);
  CHECK(none.calls() == 0);
  CHECK(read_text(cut / "out" / "layers.csv") == read_text(whole / "out" / "layers.csv"));
}

namespace {
// The fake backend under another name: a second backend whose numbers would differ from the first's.
class OtherBackend : public FakeBackend {
 public:
  std::string name() const override { return "other"; }
};

// A run of kGrid into dir/out on the fake backend, interrupted after 3 units; the options that resume it.
SweepOptions interrupted_run(const ScratchDir& dir, const Grid& grid, std::ostringstream& err) {
  FakeBackend failing(3);
  CHECK_THROWS_WITH(run_sweep(grid, failing, options(dir / "out"), err), "fake backend interrupted");
  SweepOptions resume = options(dir / "out", -1);
  resume.resume = true;
  return resume;
}
}  // namespace

// A run interrupted on one backend and resumed on another would mix their numbers in one file: refused,
// naming the backend to resume with; the same backend resumes.
TEST_CASE("a resume on another backend than the run started on is refused, naming it") {
  ScratchDir dir("backend");
  const Grid grid = parse_grid(kGrid, "g.toml");
  std::ostringstream err;
  const SweepOptions resume = interrupted_run(dir, grid, err);
  CHECK(read_text(dir / "out" / "parts" / "grid.json").find("\"backend\": \"fake\"") != std::string::npos);
  OtherBackend other;
  CHECK_THROWS_WITH(run_sweep(grid, other, resume, err),
                    Catch::Contains("it was run on the fake backend, this run is on the other backend") &&
                        Catch::Contains("--backend fake"));
  CHECK(other.calls() == 0);
  FakeBackend same;
  CHECK(run_sweep(grid, same, resume, err).units_resumed > 0);
}

// A checkpoint written before grid.json recorded the backend names none: it resumes on any backend.
TEST_CASE("a checkpoint that names no backend resumes on any") {
  ScratchDir dir("backendless");
  const Grid grid = parse_grid(kGrid, "g.toml");
  std::ostringstream err;
  const SweepOptions resume = interrupted_run(dir, grid, err);
  const auto file = dir / "out" / "parts" / "grid.json";
  auto j = nlohmann::ordered_json::parse(read_text(file));
  REQUIRE(j.erase("backend") == 1);
  normsim::test::write_text(file, j.dump(1) + "\n");
  OtherBackend other;
  CHECK(run_sweep(grid, other, resume, err).units_resumed > 0);
}

TEST_CASE("NaN and Inf: warned per sample, listed in nonfinite.csv, absent from layers.csv and summary.csv") {
  ScratchDir dir("nonfinite");
  const Grid grid = parse_grid(kGrid, "g.toml");
  std::ostringstream err;
  FakeBackend backend;
  run_sweep(grid, backend, options(dir / "out"), err);
  CHECK(read_text(dir / "out" / "nonfinite.csv") ==
        "config,sample,pass,layer,metric\n1,1,forward,2,\n3,1,forward,2,\n");
  CHECK(err.str().find("config 1 sample 1: NaN or Inf in the forward pass at layer 2") != std::string::npos);
  CHECK(err.str().find("config 3 sample 1") != std::string::npos);
  for (const char* file : {"layers.csv", "summary.csv"}) {
    const std::string text = read_text(dir / "out" / file);
    CHECK(text.find("nan") == std::string::npos);
    CHECK(text.find("inf") == std::string::npos);
  }
  // Config 1's layer 0 keeps all three samples, layer 2 only the two that stayed finite.
  const std::string summary = read_text(dir / "out" / "summary.csv");
  const std::string row = csv_key_fields(grid, 1, key_columns(set_in(grid.configs)))
                              .append("act_sq,0,,");  // (no "\n" + string: GCC 12 -Wrestrict)
  CHECK(summary.find(row) != std::string::npos);
  CHECK(summary.find(csv_header(ResultTable::summary, grid.configs)) == 0);
}

TEST_CASE("a non-empty OUT is refused without --resume or --force, and left as it was") {
  ScratchDir dir("occupied");
  normsim::test::write_text(dir / "notes.txt", "mine");
  const Grid grid = parse_grid(kGrid, "g.toml");
  std::ostringstream err;
  FakeBackend backend;
  CHECK_THROWS_AS(run_sweep(grid, backend, options(dir.path()), err), SweepError);
  CHECK_THROWS_WITH(run_sweep(grid, backend, options(dir.path()), err), Catch::Contains("is not empty"));
  CHECK(listing(dir.path()) == std::vector<std::string>{"notes.txt"});
  CHECK(backend.calls() == 0);

  SECTION("--resume on a folder that is no run is refused too") {
    SweepOptions o = options(dir.path());
    o.resume = true;
    CHECK_THROWS_WITH(run_sweep(grid, backend, o, err), Catch::Contains("no parts/grid.json"));
  }
  SECTION("--force starts over and keeps files it does not own") {
    SweepOptions o = options(dir.path());
    o.force = true;
    run_sweep(grid, backend, o, err);
    CHECK(std::filesystem::exists(dir / "run.json"));
    CHECK(read_text(dir / "notes.txt") == "mine");
  }
}

TEST_CASE("resuming on a different grid says what differs") {
  ScratchDir dir("mismatch");
  std::ostringstream err;
  FakeBackend failing(3);  // interrupted: OUT holds its checkpoint (parts/), no result files
  CHECK_THROWS(run_sweep(parse_grid(kGrid, "g.toml"), failing, options(dir / "out"), err));
  FakeBackend backend;
  SweepOptions o = options(dir / "out", -1);
  o.resume = true;
  const Grid other = parse_grid(kGrid, "g.toml", std::vector<std::string>{"depth=[2,4]"});
  CHECK_THROWS_WITH(run_sweep(other, backend, o, err),
                    Catch::Contains("config 2: key 'depth' was 3, now 4") && Catch::Contains("--force"));
  const Grid fewer = parse_grid(kGrid, "g.toml", std::vector<std::string>{"depth=2"});
  CHECK_THROWS_WITH(run_sweep(fewer, backend, o, err), Catch::Contains("swept keys were"));
  o.unit_samples = 1;
  CHECK_THROWS_WITH(run_sweep(parse_grid(kGrid, "g.toml"), backend, o, err),
                    Catch::Contains("--unit-samples 2"));
  CHECK(backend.calls() == 0);
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "run.json"));

  // Finished (its checkpoint removed): another grid is refused by what differs, run.json read for it.
  o.unit_samples = -1;
  run_sweep(parse_grid(kGrid, "g.toml"), backend, o, err);
  REQUIRE_FALSE(std::filesystem::exists(dir / "out" / "parts"));
  const std::string before = read_text(dir / "out" / "layers.csv");
  CHECK_THROWS_WITH(run_sweep(other, backend, o, err),
                    Catch::Contains("finished run of another grid") &&
                        Catch::Contains("config 2: key 'depth' was 3, now 4"));
  CHECK(read_text(dir / "out" / "layers.csv") == before);
}

TEST_CASE("a backend returning the wrong records is an error, not a silent gap") {
  struct Short : FakeBackend {
    std::vector<SampleRecord> run(const Config& c, std::span<const int> s) override {
      auto r = FakeBackend::run(c, s);
      r.pop_back();
      return r;
    }
  } backend;
  const Grid grid = parse_grid(kGrid, "g.toml");
  CHECK_THROWS_WITH(run_unit(backend, grid, Unit{0, 0, 3}),
                    Catch::Contains("returned 2 records for 3 samples"));
}

TEST_CASE("write_final refuses records that miss a sample") {
  ScratchDir dir("missing");
  const Grid grid = parse_grid("samples = 2\ndepth = 2\n", "g.toml");
  FakeBackend backend;
  std::vector<UnitResult> results{run_unit(backend, grid, Unit{0, 0, 1})};
  CHECK_THROWS_WITH(write_final(dir.path(), grid, results, RunInfo{}),
                    Catch::Contains("sample 1 is missing"));
}
