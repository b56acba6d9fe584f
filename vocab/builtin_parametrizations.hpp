// Every built-in parametrization as data (docs/design/parametrization.md 3.2, docs/parametrizations.md):
// its config name, its rules (vocab/param_rules.hpp), the source they were read from (file and line of the
// official code) and the other keys that source also sets. `normsim list parametrizations` prints this table.
#pragma once
#include <span>
#include <string>
#include <string_view>

namespace normsim::vocab {

struct BuiltinParametrization {
  std::string_view name;
  std::string_view extends;  // "" or the preset whose rules come first
  std::string_view rules;    // its own, after those of `extends`
  std::string_view source;
  std::string_view keys;  // what else the source sets, as normsim keys (or that it has no counterpart)
};

std::span<const BuiltinParametrization> builtin_parametrizations();
// The row named `name`, or nullptr (none and custom are no rows).
const BuiltinParametrization* find_parametrization(std::string_view name);
// The whole rule text of a preset: its base's, then its own.
std::string preset_rules(const BuiltinParametrization& p);

}  // namespace normsim::vocab
