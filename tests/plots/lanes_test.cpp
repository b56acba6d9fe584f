// A results folder of a grid with a block of lanes (docs/design/multistream.md 3.3): its tables have a `lane`
// column after k, and besides each row of the lanes' mean ("mean") one row per lane. Figures draw the mean:
// the fixture's folder with lane rows added (values far from the mean's) reads as the folder without them.
#include <catch2/catch.hpp>
#include <fstream>
#include <set>

#include "io/csv_read.hpp"
#include "io/csv_write.hpp"
#include "plots/render_folder.hpp"
#include "plots/results_folder.hpp"
#include "plots/sample_values.hpp"
#include "results_fixture.hpp"

namespace fs = std::filesystem;
using namespace normsim::plots;
using namespace normsim::plots::test;

namespace {

// `file` rewritten with a lane column after k: act_sq and grad_sq rows become the lanes' mean's, each
// followed by two lanes' rows holding 1000 times its value; the other metrics' lane is empty.
void add_lanes(const fs::path& file) {
  const normsim::io::CsvTable t = normsim::io::read_csv(file);
  const int k = t.require("k"), metric = t.require("metric");
  const int value = t.find("value") >= 0 ? t.find("value") : t.require("mean");
  const auto line = [&](const std::vector<std::string>& fields, const std::string& lane) {
    return csv_line_with(fields, std::size_t(k) + 1, lane);
  };
  std::vector<std::string> header = t.header;
  std::string out = line(header, "lane");
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const bool per_lane =
        t.rows[r][std::size_t(metric)] == "act_sq" || t.rows[r][std::size_t(metric)] == "grad_sq";
    out.append(line(t.rows[r], per_lane ? "mean" : ""));
    if (!per_lane) continue;
    std::vector<std::string> far = t.rows[r];
    far[std::size_t(value)] = normsim::io::format_number(1000 * normsim::io::parse_number(t, r, value));
    out.append(line(far, "0"));
    out.append(line(far, "1"));
  }
  std::ofstream(file, std::ios::trunc) << out;
}

}  // namespace

TEST_CASE("a folder with lane rows reads as its lanes' mean", "[plots][lanes]") {
  TempDir plain("lanes-plain"), laned("lanes-laned");
  write_results_folder(plain.path());
  write_results_folder(laned.path());
  for (const char* file : {"summary.csv", "layers.csv", "theory.csv"}) add_lanes(laned.path() / file);
  REQUIRE(read_text(laned.path() / "summary.csv").find(",k,lane,mean,") != std::string::npos);
  const ResultsFolder a = load_results(plain.path()), b = load_results(laned.path());
  CHECK(a.keys == b.keys);
  CHECK(a.metrics == b.metrics);
  REQUIRE(a.summary.size() == b.summary.size());
  for (std::size_t i = 0; i < a.summary.size(); ++i) {
    CHECK(a.summary[i].metric == b.summary[i].metric);
    CHECK(a.summary[i].layer == b.summary[i].layer);
    CHECK(a.summary[i].mean == b.summary[i].mean);
  }
  CHECK(a.theory == b.theory);
  const std::set<std::string> metrics{"act_sq", "grad_sq", "cos_next"};
  const SampleValues ea = read_end_values(plain.path() / "layers.csv", metrics),
                     eb = read_end_values(laned.path() / "layers.csv", metrics);
  REQUIRE(ea.size() == eb.size());
  for (const auto& [key, e] : ea) {
    CHECK(eb.at(key).first == e.first);
    CHECK(eb.at(key).last == e.last);
  }
}
