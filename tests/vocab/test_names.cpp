// The vocabulary's name tables: every value has one name, and parsing a name gives the value back.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "vocab/closest_name.hpp"
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

// "Did you mean": a typo a few edits away finds its name; a far one finds none (vocab/closest_name.hpp).
TEST_CASE("the closest valid name to a misspelt one, or none", "[vocab][names]") {
  using normsim::vocab::closest_name;
  using normsim::vocab::edit_distance;
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("width", "width") == 0);
  const std::vector<std::string> keys{"width", "depth", "tokens", "placement"};
  CHECK(closest_name("widht", keys) == "width");         // two substitutions
  CHECK(closest_name("placment", keys) == "placement");  // one deletion
  CHECK(closest_name("samples", keys).empty());          // nothing within max(2, 7 / 3) edits
  const std::vector<std::string_view> views{"pre", "post"};
  CHECK(closest_name("pos", views) == "post");  // 1 edit away, "pre" 2
  CHECK(closest_name("pas", views) == "pre");   // both 2 away: the first
}
