// "Did you mean": the closest of a set of valid names to a name that is not one of them, for the messages
// that refuse a config key, a config value or a claim id.
#pragma once
#include <span>
#include <string>
#include <string_view>

namespace normsim::vocab {

// Levenshtein distance: insertions, deletions and substitutions of one character, each 1.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The name of `names` closest to `name` by edit distance, or "" when none is within max(2, |name| / 3)
// edits (farther ones are not what a typo gives); the first of equally close names.
std::string closest_name(std::string_view name, std::span<const std::string_view> names);
std::string closest_name(std::string_view name, std::span<const std::string> names);

}  // namespace normsim::vocab
