// The tables a report shows, as plain strings, so the Markdown and HTML writers lay out the same content.
#pragma once

#include <string>
#include <vector>

#include "render_figures.hpp"
#include "results_folder.hpp"

namespace normsim::plots {

struct ReportTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

ReportTable run_table(const ResultsFolder& folder);  // version, commit, backend, threads, timings, ...
ReportTable fixed_settings_table(const ResultsFolder& folder);  // keys equal in every configuration
ReportTable configs_table(const ResultsFolder& folder);         // id, seed and the keys that vary
ReportTable metrics_table(const ResultsFolder& folder);         // run.json's metric definitions
ReportTable verdicts_table(const ResultsFolder& folder);        // one row per claim of verdicts.json
// nonfinite.csv summarized: per (config, pass, metric) the samples and the first layer; empty: none.
ReportTable nonfinite_table(const ResultsFolder& folder);
// "31 claims: 24 supported, 4 refuted, 3 inconclusive" (then any other verdict verdicts.json uses, such as
// "1 not testable at init", in the order it first appears); with several kinds, one such count per kind
// ("... (by kind) literature 20: ...; reading 8: 5 consistent with normsim's reading, ...; self 19: ...").
std::string verdict_tally(const ResultsFolder& folder);

// Figure sections in report order, with their headings.
struct FigureSection {
  std::string heading;
  std::vector<const RenderedFigure*> figures;
};
std::vector<FigureSection> figure_sections(const std::vector<RenderedFigure>& figures);

// A JSON value as a table cell: strings bare, numbers short, anything else as compact JSON.
std::string json_cell(const nlohmann::json& value);

}  // namespace normsim::plots
