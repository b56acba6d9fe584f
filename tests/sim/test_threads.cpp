// Same config and seed give bit-identical records whatever the thread count or the way samples are split.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <vector>

#include "sim/cpu_backend.hpp"

using namespace normsim::sim;

namespace {
bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}
}  // namespace

TEST_CASE("records are identical for 1 and 2 threads and any sample split", "[threads]") {
  Config c;
  c.sublayer = normsim::vocab::Sublayer::transformer;
  c.placement = normsim::vocab::Placement::pre;
  c.activation = normsim::vocab::Activation::gelu;
  c.width = 32;
  c.tokens = 8;
  c.depth = 6;
  const std::vector<int> samples{0, 1, 2, 3, 4};
  const auto one = CpuBackend(1).run(c, samples);
  const auto two = CpuBackend(2).run(c, samples);
  const std::vector<int> tail{3, 4};
  const auto split = CpuBackend(2).run(c, tail);
  REQUIRE(one.size() == two.size());
  for (std::size_t s = 0; s < one.size(); ++s)
    for (std::size_t m = 0; m < one[s].values.size(); ++m)
      for (std::size_t l = 0; l < one[s].values[m].size(); ++l) {
        REQUIRE(same_bits(one[s].values[m][l], two[s].values[m][l]));
        if (s >= 3) REQUIRE(same_bits(one[s].values[m][l], split[s - 3].values[m][l]));
      }
}
