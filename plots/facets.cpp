// Facets by placement family or value runs (see facets.hpp).
#include "facets.hpp"

#include <algorithm>

#include "vocab/builtin_blocks.hpp"
#include "vocab/names.hpp"

namespace normsim::plots {

// A built-in's family is part of its definition (vocab/builtin_blocks.cpp).
std::string placement_family(const std::string& placement) {
  const auto id = vocab::find<vocab::Placement>(placement);
  const vocab::BuiltinPlacement* builtin = id ? vocab::find_builtin(*id) : nullptr;
  return builtin ? std::string(vocab::name(builtin->family)) : "other";
}

std::string family_title(const std::string& family) {
  const auto id = vocab::find<vocab::PlacementFamily>(family);
  return id ? std::string(vocab::meaning(*id)) : family;
}

namespace {

// Splits one group into runs of at most six, numbering the parts when there is more than one.
void add_in_runs(std::vector<Facet>& facets, const Facet& group) {
  const std::size_t n = group.members.size();
  const std::size_t parts = (n + most_lines_per_panel - 1) / most_lines_per_panel;
  for (std::size_t part = 0; part < parts; ++part) {
    const std::string number = parts > 1 ? std::to_string(part + 1) : "";
    Facet facet{group.title + (parts > 1 ? " (" + number + ")" : ""), group.slug + number, {}};
    // Even runs (5 + 5 rather than 6 + 4), so no facet is much fuller than another.
    for (std::size_t i = part * n / parts; i < (part + 1) * n / parts; ++i)
      facet.members.push_back(group.members[i]);
    facets.push_back(std::move(facet));
  }
}

}  // namespace

std::vector<Facet> facets_of(const std::string& key, const std::vector<std::string>& values) {
  std::vector<Facet> facets;
  if (values.size() <= most_lines_per_panel) {
    Facet all{"", "", {}};
    for (std::size_t i = 0; i < values.size(); ++i) all.members.push_back(i);
    return {all};
  }
  if (key == "placement") {
    std::vector<Facet> families;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::string family = placement_family(values[i]);
      auto it = families.begin();
      while (it != families.end() && it->slug != family) ++it;
      if (it == families.end()) it = families.insert(families.end(), Facet{family_title(family), family, {}});
      it->members.push_back(i);
    }
    for (const auto& family : families) add_in_runs(facets, family);
    return facets;
  }
  const std::size_t parts = (values.size() + most_lines_per_panel - 1) / most_lines_per_panel;
  for (std::size_t part = 0; part < parts; ++part) {
    const std::size_t first = part * values.size() / parts, last = (part + 1) * values.size() / parts;
    Facet facet{key + " = " + values[first] + " to " + values[last - 1],
                key + "-" + values[first] + "-" + values[last - 1],
                {}};
    for (std::size_t i = first; i < last; ++i) facet.members.push_back(i);
    facets.push_back(std::move(facet));
  }
  return facets;
}

namespace {

bool same_points(const ChartSeries& a, const ChartSeries& b) {
  if (a.points.size() != b.points.size()) return false;
  for (std::size_t i = 0; i < a.points.size(); ++i) {
    const ChartPoint &p = a.points[i], &q = b.points[i];
    if (p.x != q.x || p.mean != q.mean || p.se != q.se || p.reference != q.reference) return false;
  }
  return true;
}

// Lines with identical values (a swept key the metric does not depend on: the loss for act_sq) are drawn
// once, their legend entry naming every one ("loss = readout, mse (identical)"): four entries for one visible
// line said nothing about the three hidden under it. The first line's label stays (facets group by it).
ChartPanel merge_identical_series(const ChartPanel& panel) {
  ChartPanel merged = panel;
  merged.series.clear();
  std::vector<std::string> others;  // by merged series: the labels of the lines it stands for, after its own
  for (const auto& s : panel.series) {
    auto same = std::find_if(merged.series.begin(), merged.series.end(),
                             [&](const ChartSeries& m) { return same_points(m, s); });
    if (same == merged.series.end()) {
      merged.series.push_back(s);
      others.emplace_back();
    } else {
      others[std::size_t(same - merged.series.begin())] += ", " + s.label;
    }
  }
  for (std::size_t i = 0; i < merged.series.size(); ++i)
    if (!others[i].empty())
      merged.series[i].title = merged.series[i].title + plain_text(others[i] + " (identical)");
  return merged;
}

}  // namespace

std::vector<ChartPanel> facet_panels(const ChartPanel& unmerged, const std::string& key) {
  const ChartPanel panel = merge_identical_series(unmerged);
  std::vector<std::string> values;
  for (const auto& s : panel.series) values.push_back(s.label);
  const auto facets = facets_of(key, values);
  if (facets.size() == 1) return {panel};
  std::vector<ChartPanel> panels;
  for (const auto& facet : facets) {
    ChartPanel part = panel;
    part.title = plain_text(facet.title);
    part.series.clear();
    for (std::size_t i : facet.members) part.series.push_back(panel.series[i]);
    panels.push_back(std::move(part));
  }
  return panels;
}

ScriptSpec chart_script(const std::string& name, const std::string& description,
                        const std::vector<ChartPanel>& panels) {
  const bool facets = panels.size() > 1;
  return {name,
          description,
          chart_columns,
          chart_preamble(panels),
          chart_body(panels, facets ? ChartLayout::facets : ChartLayout::panels),
          static_cast<int>(panels.size()),
          facets};
}

}  // namespace normsim::plots
