// The schema of a Config: one table row per key (name, TOML type, default, meaning, allowed values, setter),
// the lists of valid names for the string-valued keys, and validation of a whole Config. Config files,
// --set overrides, `normsim list keys` and experiments/README.md all read this one table.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/config.hpp"

namespace normsim::sim {

// A key's value as it appears in a config file (TOML integer, float, boolean, string, or a list of names
// for a name_list key).
using KeyValue = std::variant<bool, std::int64_t, double, std::string, std::vector<std::string>>;

// name_list: a key whose one value is a list of names (`metrics`); a list given for it is that value and
// never sweeps (a list given for any other key sweeps it, sim/run/config_file.hpp).
enum class KeyType { boolean, integer, floating, string, name_list };

// A valid name for a string-valued key, with its one-line meaning.
struct Choice {
  std::string_view name;
  std::string_view description;
};

struct KeyInfo {
  std::string_view name;
  KeyType type;
  std::string_view group;           // "model", "placement", "init", "input", "backward", "run"
  std::string_view meaning;         // one line
  std::string allowed;              // allowed values, in words ("relu | gelu | ...", ">= 1", "[0, 1]")
  std::span<const Choice> choices;  // the valid names when the key takes one of a fixed set, else empty
  std::function<KeyValue(const Config&)> get;
  std::function<void(Config&, const KeyValue&)> set;  // value already coerced to `type` and checked
  // Why `value` is impossible for this key on its own (other keys aside), or "" when it is allowed.
  std::function<std::string(const KeyValue&)> check;
  // A column of the result tables (and a value of run.json) only in grids where some configuration sets it
  // to other than its default: keys added after result files existed leave those files byte for byte
  // (docs/design/parametrization.md 3.5).
  bool when_set = false;
};

// Every key, in the order of the Config struct.
std::span<const KeyInfo> config_keys();
// The row for `name`, or nullptr.
const KeyInfo* find_key(std::string_view name);
// The closest key name (for "did you mean"), or "" when none is close.
std::string suggest_key(std::string_view name);

// The valid names of the string-valued model keys. (The lead may later replace the first three by lookups
// in the placement, sublayer and activation registries.)
std::span<const Choice> placement_choices();
std::span<const Choice> sublayer_choices();
std::span<const Choice> activation_choices();
std::span<const Choice> norm_choices();
std::span<const Choice> init_choices();
std::span<const Choice> parametrization_choices();  // none, the presets, custom

// `value` converted to the key's type: an integer where a float is expected becomes a float, a boolean
// where "true"/"false" are valid names becomes that name, a string where a list of names is expected a list
// of one. nullopt when the type cannot be converted.
std::optional<KeyValue> coerce(const KeyInfo& key, const KeyValue& value);

std::string_view type_name(KeyType type);  // "boolean", "integer", "float", "string", "list of names"
std::string_view type_name(const KeyValue& value);
// The value as written in result files: integers in decimal, floats in the shortest form that reads back
// to the same double, booleans as true/false, strings as they are, lists of names as [a, b].
std::string format_value(const KeyValue& value);
// The value as written in a TOML file or in messages (strings quoted).
std::string format_toml(const KeyValue& value);

// One impossible value or combination: `key` is the key to blame, `related` the other keys involved.
struct ConfigIssue {
  std::string key;
  std::string message;  // "3 does not divide width 256"
  std::vector<std::string> related;
  std::string what() const { return "key '" + key + "': " + message; }
};

// Every problem of a Config: each key checked on its own, then combinations (heads dividing width, even
// depth for transformer, b2t and spannorm). Empty when the Config can be run.
std::vector<ConfigIssue> validate(const Config& config);
// The derived sizes that no type or draw counter can hold (hidden width past INT_MAX, a matrix past 2^34
// entries): part of validate().
std::vector<ConfigIssue> size_issues(const Config& config);

}  // namespace normsim::sim
