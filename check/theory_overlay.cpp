#include "check/theory_overlay.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>

#include "check/spec_from_config.hpp"
#include "sim/atomic_file.hpp"
#include "sim/metrics.hpp"
#include "theory/meanfield.hpp"

namespace normsim::check {

std::size_t write_theory_csv(const std::filesystem::path& out, const sim::Grid& grid,
                             std::vector<std::string>* skipped) {
  std::ostringstream csv;
  csv << "config,layer,metric,value\n";
  std::size_t rows = 0;
  for (std::size_t c = 0; c < grid.configs.size(); ++c) {
    theory::MeanFieldProfile profile;
    try {
      profile = theory::meanfield(to_stack_spec(grid.configs[c]));
    } catch (const std::exception& e) {
      if (skipped) skipped->push_back("config " + std::to_string(c) + ": " + e.what());
      continue;
    }
    for (const sim::MetricInfo& m : sim::metric_table()) {
      const theory::Series* series = profile.metric(m.name);
      if (!series) continue;
      for (std::size_t l = 0; l < series->size(); ++l) {
        const auto& v = (*series)[l];
        if (!v || !std::isfinite(*v)) continue;
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.17g", *v);
        csv << c << ',' << l << ',' << m.name << ',' << buf << '\n';
        ++rows;
      }
    }
  }
  sim::write_file_atomic(out / "theory.csv", csv.str());
  return rows;
}

}  // namespace normsim::check
