// CSV writing: numbers that read back as the same double, fields quoted only when they must be.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "io/csv_write.hpp"

using namespace normsim::io;

// Issue 30: every number normsim writes reads back as the same double, in any CSV reader: strtod gives the
// same bits, and no field is a bare integer of 16 or more digits (read as an integer, or past int64 as a
// string, by pandas). Powers of ten and their neighbours from the smallest subnormal to the largest
// double, the 1e18-1e22 integers the issue found, and 10^5 random bit patterns (fixed seed).
TEST_CASE("format_number: shortest text that reads back as the same double, never a long integer") {
  std::vector<double> xs = {0.0,
                            -0.0,
                            1.0,
                            -1.0,
                            0.1,
                            1e15,
                            1e16 - 2,
                            19016889231223029760.0,
                            1e22,
                            9.5e21,
                            std::numeric_limits<double>::denorm_min(),
                            std::numeric_limits<double>::min(),
                            std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::lowest()};
  for (int e = -324; e <= 308; ++e) {
    const double p = std::pow(10.0, e);
    xs.insert(xs.end(), {p, std::nextafter(p, 0.0), std::nextafter(p, HUGE_VAL), -p});
  }
  std::mt19937_64 gen(30);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t bits = gen();
    double x;
    std::memcpy(&x, &bits, sizeof x);
    if (std::isfinite(x)) xs.push_back(x);
  }
  std::size_t bad = 0;
  for (const double x : xs) {
    const std::string s = format_number(x);
    const double back = std::strtod(s.c_str(), nullptr);
    const std::size_t digits = s.size() - (s[0] == '-' ? 1 : 0);
    const bool long_integer = s.find_first_of(".eEni") == std::string::npos && digits >= 16;
    if (std::memcmp(&back, &x, sizeof x) != 0 || long_integer) {
      if (++bad <= 5) UNSCOPED_INFO(x << " written as " << s);
    }
  }
  CHECK(bad == 0);
  CHECK(format_number(19016889231223029760.0) == "1.901688923122303e+19");
  CHECK(format_number(std::numeric_limits<double>::quiet_NaN()) == "nan");
  CHECK(format_number(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(format_number(12345.0) == "12345");  // short integers stay as they are
}

TEST_CASE("csv_field quotes a field only when it holds a comma, quote or line break") {
  CHECK(csv_field("pre") == "pre");
  CHECK(csv_field("") == "");
  CHECK(csv_field("x,y") == "\"x,y\"");
  CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  CHECK(csv_field("a\nb") == "\"a\nb\"");
  CHECK(csv_field("a\rb") == "\"a\rb\"");
}
