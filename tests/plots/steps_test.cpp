// A results folder of a grid with training steps (docs/design/parametrization.md 3.5): its tables have a
// `step` column after k, one row per step. Figures draw one step (PlotOptions::step, `normsim plot --step`):
// the fixture's folder with a step column (step 0 its rows, step 1 the same rows at 1000 times the value)
// reads at step 0 as the folder without the column and at step 1 as those rows; theory.csv (the mean field
// of init) is drawn at step 0 only; a step the folder lacks is an error naming the steps it has.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "io/csv_read.hpp"
#include "io/csv_write.hpp"
#include "plots/plot_error.hpp"
#include "plots/results_folder.hpp"
#include "plots/sample_values.hpp"
#include "results_fixture.hpp"

namespace fs = std::filesystem;
using namespace normsim::plots;
using namespace normsim::plots::test;

namespace {

// `file` rewritten with a step column after k: every row at step 0, then (unless `init_only`, as theory.csv
// is written) every row again at step 1 with 1000 times its value.
void add_steps(const fs::path& file, bool init_only) {
  const normsim::io::CsvTable t = normsim::io::read_csv(file);
  const int k = t.require("k");
  const int value = t.find("value") >= 0 ? t.find("value") : t.require("mean");
  const auto line = [&](const std::vector<std::string>& fields, const std::string& step) {
    return csv_line_with(fields, std::size_t(k) + 1, step);
  };
  std::string out = line(t.header, "step");
  for (std::size_t r = 0; r < t.rows.size(); ++r) out += line(t.rows[r], "0");
  for (std::size_t r = 0; r < t.rows.size() && !init_only; ++r) {
    std::vector<std::string> later = t.rows[r];
    later[std::size_t(value)] = normsim::io::format_number(1000 * normsim::io::parse_number(t, r, value));
    out += line(later, "1");
  }
  std::ofstream(file, std::ios::trunc) << out;
}

}  // namespace

TEST_CASE("a folder with steps draws one step: init by default, another on request", "[plots][steps]") {
  TempDir plain("steps-plain"), stepped("steps-stepped");
  write_results_folder(plain.path());
  write_results_folder(stepped.path());
  for (const char* file : {"summary.csv", "layers.csv"}) add_steps(stepped.path() / file, false);
  add_steps(stepped.path() / "theory.csv", true);
  REQUIRE(read_text(stepped.path() / "summary.csv").find(",k,step,mean,") != std::string::npos);
  const ResultsFolder a = load_results(plain.path()), init = load_results(stepped.path()),
                      later = load_results(stepped.path(), 1);
  REQUIRE(a.summary.size() == init.summary.size());
  REQUIRE(a.summary.size() == later.summary.size());
  for (std::size_t i = 0; i < a.summary.size(); ++i) {
    CHECK(init.summary[i].mean == a.summary[i].mean);
    CHECK(later.summary[i].mean == 1000 * a.summary[i].mean);
  }
  CHECK(init.theory == a.theory);
  CHECK_FALSE(a.theory.empty());
  CHECK(later.theory.empty());  // the mean field is of init
  const std::set<std::string> metrics{"act_sq"};
  const SampleValues ea = read_end_values(plain.path() / "layers.csv", metrics),
                     e1 = read_end_values(stepped.path() / "layers.csv", metrics, 1);
  REQUIRE(ea.size() == e1.size());
  for (const auto& [key, e] : ea) CHECK(e1.at(key).last.at(0) == 1000 * e.last.at(0));
  try {
    load_results(stepped.path(), 2);
    FAIL("step 2 was read");
  } catch (const PlotError& e) {
    CHECK(std::string(e.what()).find("its steps: 0, 1") != std::string::npos);
  }
  CHECK_THROWS_AS(load_results(plain.path(), 1), PlotError);  // no step column: step 0 only
}
