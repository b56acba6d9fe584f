// The vocabulary's name tables: every value has one name, and parsing a name gives the value back.
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "vocab/names.hpp"

using namespace normsim::vocab;

namespace {
template <class E>
void check_round_trip() {
  std::set<std::string_view> seen;
  for (const auto& n : table<E>()) {
    INFO(kind_name<E>() << " " << n.name);
    CHECK(seen.insert(n.name).second);
    CHECK(parse<E>(n.name) == n.value);
    CHECK(name(n.value) == n.name);
  }
  CHECK_THROWS_WITH(parse<E>("no-such-name"),
                    Catch::StartsWith("unknown " + std::string(kind_name<E>()) +
                                      " 'no-such-name' (known: " + std::string(table<E>().front().name)));
}
}  // namespace

TEST_CASE("every vocabulary name parses back to its value") {
  check_round_trip<Placement>();
  check_round_trip<Sublayer>();
  check_round_trip<Activation>();
  check_round_trip<Norm>();
  check_round_trip<Loss>();
  check_round_trip<Init>();
  check_round_trip<FinalNorm>();
  CHECK(table<Placement>().size() == 15);
  CHECK(name(FinalNorm::never) == "false");
}
