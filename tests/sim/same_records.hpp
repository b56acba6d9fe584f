// Whether two runs' records are the same numbers, bit for bit (NaN where both are NaN): the comparison of
// the tests that call one configuration another's equal (a custom block and its built-in, a preset and the
// init it restates).
#pragma once
#include <cmath>
#include <cstring>
#include <vector>

#include "sim/record.hpp"

namespace normsim::test {

inline bool same_records(const std::vector<sim::SampleRecord>& a, const std::vector<sim::SampleRecord>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t s = 0; s < a.size(); ++s) {
    if (a[s].values.size() != b[s].values.size()) return false;
    for (std::size_t m = 0; m < a[s].values.size(); ++m) {
      const auto &x = a[s].values[m], &y = b[s].values[m];
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (std::memcmp(&x[i], &y[i], sizeof(double)) != 0 && !(std::isnan(x[i]) && std::isnan(y[i])))
          return false;
    }
  }
  return true;
}

}  // namespace normsim::test
