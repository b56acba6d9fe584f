#include "meanfield_of/theory_overlay.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <tuple>

#include "io/atomic_file.hpp"
#include "io/csv_write.hpp"
#include "meanfield_of/spec_from_config.hpp"
#include "sim/metrics.hpp"
#include "sim/run/result_rows.hpp"
#include "theory/meanfield.hpp"

namespace normsim::meanfield_of {

std::vector<TheoryValue> theory_values(const sim::Grid& grid, std::vector<std::string>* skipped,
                                       std::vector<TheoryValue>* nonfinite) {
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
    for (const auto& bad : profile.nonfinite)
      if (const int m = sim::metric_id(bad.metric);
          nonfinite && m >= 0 && grid.configs[c].metrics.contains(m))
        nonfinite->push_back({c, std::size_t(m), std::size_t(bad.index), 0.0});
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

namespace {

// nonfinite.csv's meanfield rows for theory_values' `nonfinite` entries, in file order (config, metric in the
// table's order, index).
std::vector<sim::NonFiniteRow> meanfield_rows(std::vector<TheoryValue> entries) {
  std::sort(entries.begin(), entries.end(), [](const TheoryValue& a, const TheoryValue& b) {
    return std::tie(a.config, a.metric, a.index) < std::tie(b.config, b.metric, b.index);
  });
  std::vector<sim::NonFiniteRow> rows;
  for (const auto& e : entries)
    rows.push_back({e.config, -1, kMeanFieldPass, sim::metric_table()[e.metric].name, int(e.index)});
  return rows;
}

// nonfinite.csv with its meanfield rows replaced by `rows` (the simulator's rows kept as written).
void put_meanfield_rows(const std::filesystem::path& path, const std::vector<sim::NonFiniteRow>& rows,
                        bool with_step) {
  std::string csv(with_step ? sim::kNonFiniteStepHeader : sim::kNonFiniteHeader);
  if (std::ifstream in(path); in) {
    const std::string marker = ",-1," + std::string(kMeanFieldPass) + ",";
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line))
      if (line.find(marker) == std::string::npos) csv.append(line).append("\n");
  }
  for (const auto& r : rows) csv += sim::nonfinite_line(r, with_step);
  io::write_file_atomic(path, csv);
}

}  // namespace

std::vector<sim::NonFiniteRow> theory_nonfinite(const sim::Grid& grid) {
  std::vector<TheoryValue> entries;
  theory_values(grid, nullptr, &entries);
  return meanfield_rows(std::move(entries));
}

std::size_t write_theory_csv(const std::filesystem::path& out, const sim::Grid& grid,
                             std::vector<std::string>* skipped) {
  std::string csv = sim::csv_header(sim::ResultTable::theory, grid.configs);
  const std::vector<std::string> columns = sim::key_columns(sim::set_in(grid.configs));
  std::vector<std::string> keys(grid.configs.size());
  for (std::size_t c = 0; c < keys.size(); ++c) keys[c] = sim::csv_key_fields(grid, c, columns);
  std::vector<TheoryValue> nonfinite;
  const auto values = theory_values(grid, skipped, &nonfinite);
  // The mean field is step 0's, and of the lanes' mean where there are lanes.
  const bool steps = sim::has_step_column(grid.configs), lanes = sim::has_lanes(grid.configs);
  for (const auto& v : values)
    csv += keys[v.config] +
           sim::csv_metric_fields(v.metric, v.index, steps ? 0 : -1,
                                  sim::theory_lane(grid.configs[v.config], v.metric), lanes) +
           io::format_number(v.value) + "\n";
  io::write_file_atomic(out / "theory.csv", csv);
  if (!nonfinite.empty() || std::filesystem::exists(out / "nonfinite.csv"))
    put_meanfield_rows(out / "nonfinite.csv", meanfield_rows(std::move(nonfinite)), steps);
  return values.size();
}

}  // namespace normsim::meanfield_of
