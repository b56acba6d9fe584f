// The metric reference in docs/metrics.md holds exactly what `normsim list metrics --markdown` prints, so
// the documentation cannot drift from the table in sim/metrics_table.cpp.
#include <catch2/catch.hpp>
#include <cstdio>
#include <string>

#include "test_util.hpp"

TEST_CASE("docs/metrics.md holds the program's metric table") {
  const std::string doc = normsim::test::read_text(std::string(NORMSIM_SOURCE_DIR) + "/docs/metrics.md");
  const std::string begin = "<!-- BEGIN normsim list metrics --markdown -->\n";
  const std::string end = "<!-- END normsim list metrics --markdown -->";
  const auto b = doc.find(begin), e = doc.find(end);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  const std::string committed = doc.substr(b + begin.size(), e - b - begin.size());
  std::string printed;
  FILE* p = popen((std::string(NORMSIM_BINARY_DIR) + "/normsim list metrics --markdown").c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  std::size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) printed.append(buf, n);
  REQUIRE(pclose(p) == 0);
  CHECK(committed == printed);
}
