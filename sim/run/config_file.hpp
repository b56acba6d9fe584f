// Config files: a TOML file (plus --set overrides) becomes a Grid, the Cartesian product of every key given
// as a list. Every error is a ConfigError whose message names the file, the line and the key.
#pragma once
#include <filesystem>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/config.hpp"

namespace normsim::sim {

// A config file or override that cannot be run; what() reads "FILE:LINE: key 'K': why" or
// "--set K=V: why".
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The configurations of one run. Keys given as lists are swept: configs is their Cartesian product, the
// first swept key varying slowest; configs[i] has id i.
// One entry of `variants` as the file writes it: its label and the keys it sets, values as TOML text (a
// string bare).
struct GridVariant {
  std::string label;
  std::vector<std::pair<std::string, std::string>> keys;
};

struct Grid {
  std::string config_file;              // as given on the command line ("" when built in code)
  std::string name;                     // [run] name (default: the file's stem)
  std::string description;              // [run] description
  std::vector<std::string> swept_keys;  // keys given as lists, in file order (--set additions last)
  std::vector<Config> configs;
  std::vector<GridVariant> variants;  // `variants`, in file order (empty without it)
  // "FILE:LINE: key 'heads' has no effect: ...": one per key that was set but is read by no configuration
  // (sim/run/key_relevance.hpp). The CLI prints them, or refuses the grid under --strict.
  std::vector<std::string> unused_keys;
};

// The keys that may sit in the optional [run] table (run options, never model keys).
struct RunKey {
  std::string_view name, meaning;
};
std::span<const RunKey> run_table_keys();

// Reads `file` and applies `overrides` ("key=value", value a TOML value; a bare word is a string).
// An override replaces the file's value of that key in place, or adds the key after the file's keys.
Grid load_grid(const std::filesystem::path& file, std::span<const std::string> overrides = {});
// The same from TOML text; `source` names it in messages.
Grid parse_grid(std::string_view toml_text, const std::string& source,
                std::span<const std::string> overrides = {});

// Grids larger than this are refused (a typo in a list should not start a billion runs).
inline constexpr std::size_t kMaxGridSize = 1'000'000;

}  // namespace normsim::sim
