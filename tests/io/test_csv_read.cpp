// CSV reading (RFC 4180): a whole table with its line numbers, and one line, as csv_write.hpp writes them.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "../sim/test_util.hpp"
#include "io/csv_read.hpp"
#include "io/csv_write.hpp"

using namespace normsim::io;
using normsim::test::ScratchDir;

TEST_CASE("CSV fields with quotes and commas round-trip") {
  ScratchDir dir("csv");
  const auto path = dir / "t.csv";
  std::ofstream(path) << "a,b,c\n"
                      << csv_field("x,y") << "," << csv_field("say \"hi\"") << ",3\r\n\n1,2,nan\n";
  const CsvTable table = read_csv(path);
  REQUIRE(table.rows.size() == 2);
  CHECK(table.rows[0][0] == "x,y");
  CHECK(table.rows[0][1] == "say \"hi\"");
  CHECK(parse_number(table, 0, 2) == 3);
  CHECK(std::isnan(parse_number(table, 1, 2)));
  CHECK(table.where(1) == path.string() + ":4");
  CHECK_THROWS_AS(parse_number(table, 0, 0), CsvError);
  std::ofstream(path) << "a,b\n1\n";
  CHECK_THROWS_WITH(read_csv(path), Catch::Contains(":2: 1 fields where the header has 2"));
}

TEST_CASE("a missing file, an empty one and a missing column are CsvErrors naming the file") {
  ScratchDir dir("csv-errors");
  CHECK_THROWS_AS(read_csv(dir / "absent.csv"), CsvError);
  std::ofstream(dir / "empty.csv") << "\n\n";
  CHECK_THROWS_WITH(read_csv(dir / "empty.csv"), Catch::Contains("empty.csv is empty"));
  std::ofstream(dir / "t.csv") << "a,b\n1,2\n";
  const CsvTable table = read_csv(dir / "t.csv");
  CHECK(table.find("b") == 1);
  CHECK(table.find("c") == -1);
  CHECK_THROWS_WITH(table.require("c"), Catch::Contains("t.csv: no column 'c'"));
}

TEST_CASE("one line splits as the table reader splits it") {
  CHECK(csv_line_fields("") == std::vector<std::string>{""});
  CHECK(csv_line_fields("a,,b,") == std::vector<std::string>{"a", "", "b", ""});
  CHECK(csv_line_fields("1,\"x,y\",\"say \"\"hi\"\"\"") ==
        std::vector<std::string>{"1", "x,y", "say \"hi\""});
  CHECK(csv_line_fields("a,b\r") == std::vector<std::string>{"a", "b"});
}
