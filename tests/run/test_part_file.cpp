// Part files: exact round trip, and refusal of anything that is not an intact part of this very run
// (altered bytes, another grid or seed, counts that would allocate gigabytes).
#include <catch2/catch.hpp>

#include "fake_backend.hpp"
#include "sim/run/sweep.hpp"

using namespace normsim::sim;
using normsim::test::FakeBackend;

namespace {
const char* kGrid = "depth = [2, 3]\nplacement = [\"pre\", \"post\"]\nnorm_gain = 3.0\nsamples = 3\n";

UnitResult some_unit(const Grid& grid) {
  FakeBackend backend;
  UnitResult r = run_unit(backend, grid, Unit{1, 0, 3});
  r.records[0].nonfinite_statistics = {{metric_id("eff_rank"), 1}, {metric_id("gradw_w2"), 0}};
  return r;
}
}  // namespace

TEST_CASE("a unit's flagged statistics survive the part format") {
  const Grid grid = parse_grid(kGrid, "g.toml");
  const UnitResult u = some_unit(grid);
  const UnitResult back = decode_unit(encode_unit(u, grid_id(grid)), u.unit, grid_id(grid), "t");
  CHECK(back.records[0].nonfinite_statistics == u.records[0].nonfinite_statistics);
  CHECK(back.records[1].nonfinite_statistics.empty());
}

TEST_CASE("every altered character of a part file is refused") {
  const Grid grid = parse_grid(kGrid, "g.toml");
  const UnitResult u = some_unit(grid);
  const std::string text = encode_unit(u, grid_id(grid));
  // Each position in turn gets a different character: the checksum (or the header check) must refuse
  // every one. A stride keeps the test fast while touching every line of the file.
  int refused = 0, tried = 0;
  for (std::size_t i = 0; i < text.size(); i += 7) {
    std::string bad = text;
    bad[i] = bad[i] == '1' ? '2' : '1';
    ++tried;
    try {
      decode_unit(bad, u.unit, grid_id(grid), "p");
    } catch (const std::runtime_error& e) {
      ++refused;
      CHECK_THAT(e.what(), Catch::Contains("damaged unit records"));
    }
  }
  CHECK(refused == tried);
  CHECK_THROWS_WITH(decode_unit(text.substr(0, text.size() / 2), u.unit, grid_id(grid), "p"),
                    Catch::Contains("damaged"));
}

TEST_CASE("a part of another grid or seed is refused") {
  const Grid grid = parse_grid(kGrid, "g.toml");
  const Grid reseeded = parse_grid(std::string(kGrid) + "seed = 7\n", "g.toml");
  REQUIRE(grid_id(grid) != grid_id(reseeded));
  const UnitResult u = some_unit(grid);
  CHECK_THROWS_WITH(decode_unit(encode_unit(u, grid_id(grid)), u.unit, grid_id(reseeded), "p"),
                    Catch::Contains("another grid or seed"));
}

TEST_CASE("a huge count in an intact-looking part is refused without allocating it") {
  const Grid grid = parse_grid(kGrid, "g.toml");
  const UnitResult u = some_unit(grid);
  std::string text = encode_unit(u, grid_id(grid));
  const auto at = text.find("act_sq ") + 7;
  text.replace(at, text.find(' ', at) - at, "2500000000");
  // Re-sign it, as a malicious or buggy writer could: the count check alone must stop it.
  text = text.substr(0, text.rfind("checksum "));
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char sum[17];
  std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(h));
  text += "checksum " + std::string(sum) + "\n";
  CHECK_THROWS_WITH(decode_unit(text, u.unit, grid_id(grid), "p"), Catch::Contains("exceeds the line"));
}
