// Small multiples: more than six lines in one plot cannot be told apart (seven usable Okabe-Ito colours, and
// a legend of twelve entries takes half the figure), so such a figure is split into facets, panels of at
// most six lines each, labelled directly at their right ends. Placements are grouped by family (where the
// norm sits), other keys into runs of consecutive values.
#pragma once

#include <string>
#include <vector>

#include "gnuplot_script.hpp"
#include "line_chart.hpp"

namespace normsim::plots {

inline constexpr std::size_t most_lines_per_panel = 6;

// The family of a placement: stream-norm (Post-LN and its descendants), branch-norm (Pre-LN and its
// descendants), mixed (Post and Pre in one stack), no-norm, or other for a name this list does not know;
// family_title says it in words ("norm on the stream").
std::string placement_family(const std::string& placement);
std::string family_title(const std::string& family);

struct Facet {
  std::string title;  // plain text: the family, or "key = first to last"
  std::string slug;   // for file names: stream-norm, branch-norm, mixed, no-norm, other, width-1-4
  std::vector<std::size_t> members;  // indices into the values passed in, in their order
};

// The facets of a figure whose lines are `values` of `key` (in display order): one facet holding all of them
// when there are at most six; else by placement family (families in order of first appearance) or runs of
// consecutive values, every facet split again into runs of at most six.
std::vector<Facet> facets_of(const std::string& key, const std::vector<std::string>& values);

// A panel split into its facets (facets_of over the series' labels, the values of `key`): each keeps the
// panel's axes and settings, holds its facet's series and is titled with the facet. One panel when it has
// at most six series.
std::vector<ChartPanel> facet_panels(const ChartPanel& panel, const std::string& key);

// The script of a chart whose single panel may have been split into facets: name, description, columns,
// preamble, body and panel count for ScriptSpec.
ScriptSpec chart_script(const std::string& name, const std::string& description,
                        const std::vector<ChartPanel>& panels);

}  // namespace normsim::plots
