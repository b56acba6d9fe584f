// Atomic files: a file appears whole or not at all, an abandoned one leaves nothing, and its temp name is
// the one is_atomic_temp recognises.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "../sim/test_util.hpp"
#include "io/atomic_file.hpp"

using namespace normsim::io;
using normsim::test::read_text;
using normsim::test::ScratchDir;

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

TEST_CASE("a temp name is this process's, and recognised as a temp name") {
  const auto tmp = temp_sibling("x/layers.csv");
  CHECK(tmp == "x/layers.csv.tmp." + std::to_string(::getpid()));
  CHECK(is_atomic_temp(tmp));
  CHECK(is_atomic_temp(temp_sibling("out/staging")));
}
