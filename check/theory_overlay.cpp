#include "check/theory_overlay.hpp"

#include <cmath>

#include "check/spec_from_config.hpp"
#include "sim/atomic_file.hpp"
#include "sim/csv.hpp"
#include "sim/metrics.hpp"
#include "sim/result_rows.hpp"
#include "theory/meanfield.hpp"

namespace normsim::check {

std::vector<TheoryValue> theory_values(const sim::Grid& grid, std::vector<std::string>* skipped) {
  std::vector<TheoryValue> values;
  for (std::size_t c = 0; c < grid.configs.size(); ++c) {
    theory::MeanFieldProfile profile;
    try {
      profile = theory::meanfield(to_stack_spec(grid.configs[c]));
    } catch (const std::exception& e) {
      if (skipped) skipped->push_back("config " + std::to_string(c) + ": " + e.what());
      continue;
    }
    const auto table = sim::metric_table();
    for (std::size_t m = 0; m < table.size(); ++m) {
      if (!grid.configs[c].metrics.contains(int(m))) continue;  // the config's `metrics` only
      const theory::Series* series = profile.metric(table[m].name);
      if (!series) continue;
      for (std::size_t i = 0; i < series->size(); ++i)
        if (const auto& v = (*series)[i]; v && std::isfinite(*v)) values.push_back({c, m, i, *v});
    }
  }
  return values;
}

std::size_t write_theory_csv(const std::filesystem::path& out, const sim::Grid& grid,
                             std::vector<std::string>* skipped) {
  std::string csv = sim::csv_header(sim::ResultTable::theory);
  std::vector<std::string> keys(grid.configs.size());
  for (std::size_t c = 0; c < keys.size(); ++c) keys[c] = sim::csv_key_fields(grid, c);
  const auto values = theory_values(grid, skipped);
  for (const auto& v : values)
    csv += keys[v.config] + sim::csv_metric_fields(v.metric, v.index) + sim::format_number(v.value) + "\n";
  sim::write_file_atomic(out / "theory.csv", csv);
  return values.size();
}

}  // namespace normsim::check
