// "Did you mean" (see closest_name.hpp).
#include "vocab/closest_name.hpp"

#include <algorithm>
#include <vector>

namespace normsim::vocab {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string closest_name(std::string_view name, std::span<const std::string_view> names) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (std::string_view n : names) {
    const std::size_t d = edit_distance(name, n);
    if (d < best_d) best_d = d, best = n;
  }
  return best;
}

std::string closest_name(std::string_view name, std::span<const std::string> names) {
  const std::vector<std::string_view> views(names.begin(), names.end());
  return closest_name(name, views);
}

}  // namespace normsim::vocab
