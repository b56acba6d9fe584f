// `normsim list families` (see list_families.hpp).
#include "app/list_families.hpp"

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include "sim/run/config_file.hpp"

#ifndef NORMSIM_FAMILIES_DIR
#define NORMSIM_FAMILIES_DIR "experiments/families"
#endif

namespace normsim::app {

namespace fs = std::filesystem;

namespace {

struct VariantRow {
  std::string family, label, keys;
};

// One row per variant, as its family's file writes it.
std::vector<VariantRow> family_rows(const fs::path& file) {
  const sim::Grid grid = sim::load_grid(file);
  if (grid.variants.empty())
    throw sim::ConfigError(file.string() + ": a family config sweeps its variants with `variants` " +
                           "(experiments/README.md, \"Variants\")");
  std::vector<VariantRow> rows;
  for (const auto& variant : grid.variants) {
    std::string keys;
    for (const auto& [key, value] : variant.keys) keys += (keys.empty() ? "" : ", ") + key + " = " + value;
    rows.push_back({file.stem().string(), variant.label, keys});
  }
  return rows;
}

}  // namespace

fs::path families_dir() {
  if (fs::is_directory("experiments/families")) return "experiments/families";
  return NORMSIM_FAMILIES_DIR;
}

void list_families(std::ostream& os, const fs::path& dir, bool markdown) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".toml") files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  std::vector<VariantRow> rows;
  for (const auto& file : files)
    for (auto& row : family_rows(file)) rows.push_back(std::move(row));
  if (markdown) {
    os << "### families\n\n| family | variant | keys |\n|---|---|---|\n";
    // the keys as code: a block's `*` and `[` are not emphasis or links
    for (const auto& r : rows) os << "| `" << r.family << "` | " << r.label << " | `" << r.keys << "` |\n";
    return;
  }
  std::size_t fw = 0, lw = 0;
  for (const auto& r : rows) fw = std::max(fw, r.family.size()), lw = std::max(lw, r.label.size());
  os << "families (" << dir.string() << "/*.toml; one line per variant: family, label, the keys it sets):\n";
  for (const auto& r : rows)
    os << "  " << r.family << std::string(fw - r.family.size() + 2, ' ') << r.label
       << std::string(lw - r.label.size() + 2, ' ') << r.keys << "\n";
}

}  // namespace normsim::app
