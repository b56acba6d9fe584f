// OUT is used by one run at a time: a second lock is refused naming the holder; a lock whose holder died
// is taken over; a refused run leaves OUT as it was.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <sstream>

#include "fake_backend.hpp"
#include "sim/run/sweep.hpp"
#include "tests/sim/test_util.hpp"

using namespace normsim::sim;
using normsim::test::ScratchDir;

TEST_CASE("a second lock on OUT is refused and names the holder") {
  ScratchDir dir("lock");
  std::optional<OutLock> first(std::in_place, dir.path());
  CHECK_THROWS_WITH(OutLock(dir.path()),
                    Catch::Contains("is in use by normsim pid " + std::to_string(getpid())));
  first.reset();
  CHECK_FALSE(std::filesystem::exists(dir / std::string(kLockFileName)));
  CHECK_NOTHROW(OutLock(dir.path()));
}

TEST_CASE("the lock of a process that died is taken over") {
  ScratchDir dir("lock-stale");
  const pid_t child = fork();
  if (child == 0) {
    new OutLock(dir.path());  // never released: the process ends holding it, as a killed run would
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  REQUIRE(std::filesystem::exists(dir / std::string(kLockFileName)));  // the dead holder's file remains
  CHECK_NOTHROW(OutLock(dir.path()));
}

TEST_CASE("a run on a locked OUT is refused before anything is written, --force included") {
  ScratchDir dir("lock-run");
  const Grid grid = parse_grid("depth = 2\nsamples = 2\n", "g.toml");
  const auto out = dir / "out";
  std::filesystem::create_directories(out);
  OutLock live(out);
  for (bool force : {false, true}) {
    SweepOptions o;
    o.out = out;
    o.force = force;
    normsim::test::FakeBackend backend;
    std::ostringstream err;
    CHECK_THROWS_AS(run_sweep(grid, backend, o, err), SweepError);
    CHECK(backend.calls() == 0);
    CHECK_FALSE(std::filesystem::exists(out / "parts"));
  }
}

TEST_CASE("a refused run leaves an absent OUT absent") {
  ScratchDir dir("lock-absent");
  const Grid grid = parse_grid("depth = 2\nsamples = 2\n", "g.toml");
  SweepOptions o;
  o.out = dir / "out";
  o.resume = o.force = true;  // refused: they exclude each other
  normsim::test::FakeBackend backend;
  std::ostringstream err;
  CHECK_THROWS_AS(run_sweep(grid, backend, o, err), SweepError);
  CHECK_FALSE(std::filesystem::exists(o.out));
}
