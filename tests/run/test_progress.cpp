// The progress bar's arithmetic: units weighed by their cost, so that the ETA of a sweep whose units differ
// in size follows the work left, not the number of units left.
#include <catch2/catch.hpp>
#include <sstream>

#include "sim/run/progress.hpp"

using normsim::sim::Progress;
using normsim::sim::remaining_seconds;

TEST_CASE("remaining time is the work left at the rate of the work run") {
  CHECK_FALSE(remaining_seconds(5.0, 0.0, 10.0).has_value());  // no rate yet
  CHECK(*remaining_seconds(2.0, 1.0, 9.0) == Approx(18.0));
  CHECK(*remaining_seconds(3.0, 4.0, 0.0) == 0.0);
}

TEST_CASE("the bar and its ETA weigh units by cost, not count") {
  std::ostringstream err;
  // A cheap unit, then one costing nine times more (a depth-9x configuration): after the cheap one took
  // 1 s, nine seconds remain. Counting units would say one.
  Progress progress({1.0, 9.0}, 0, false, err);
  CHECK(progress.line(0.0).ends_with("0/2 units  elapsed 0:00  ETA --:--"));
  progress.advance(1.0);
  const std::string after_cheap = progress.line(1.0);
  CHECK(after_cheap.starts_with("[###......"));  // 1/10 of the work: 3 of 30 marks
  CHECK(after_cheap.ends_with("1/2 units  elapsed 0:01  ETA 0:09"));
  progress.advance(9.0);
  CHECK(progress.line(10.0) == "[" + std::string(30, '#') + "] 2/2 units  elapsed 0:10");
  CHECK(err.str().empty());  // no bar asked for: nothing printed
}

TEST_CASE("resumed units count as done but not in the rate") {
  std::ostringstream err;
  // Three units of cost 2, the first resumed from an earlier run: the 2 s of this run did cost 2 of work,
  // so the last unit (cost 2) takes 2 s more, whatever the resumed one had cost.
  Progress progress({2.0, 2.0, 2.0}, 1, false, err);
  CHECK(progress.line(0.0).ends_with("1/3 units  elapsed 0:00  ETA --:--"));
  progress.advance(2.0);
  CHECK(progress.line(2.0).ends_with("2/3 units  elapsed 0:02  ETA 0:02"));
}
