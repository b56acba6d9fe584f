// `normsim list families`: the design families of experiments/families/*.toml (one config per family, one
// `variants` entry per line of its figures; docs/placements.md "Design families", scripts/family_figures.sh).
#pragma once
#include <filesystem>
#include <iosfwd>

namespace normsim::app {

// The family configs' folder: ./experiments/families, else the source tree's.
std::filesystem::path families_dir();

// One row per variant of every family (file order of its `variants`): the family (the config's stem), the
// variant's label and the keys it sets, as the file writes them; plain text or a Markdown table.
// Throws sim::ConfigError for a family file that cannot be read.
void list_families(std::ostream& os, const std::filesystem::path& dir, bool markdown);

}  // namespace normsim::app
