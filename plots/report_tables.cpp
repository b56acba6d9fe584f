// Report tables (see report_tables.hpp): what run.json and verdicts.json say, in rows.
#include "report_tables.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <tuple>

namespace normsim::plots {

std::string json_cell(const nlohmann::json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  if (value.is_number_float()) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.6g", value.get<double>());
    return buffer;
  }
  if (value.is_array() && std::all_of(value.begin(), value.end(), [](auto& v) { return v.is_string(); })) {
    std::string joined;
    for (const auto& v : value) joined += (joined.empty() ? "" : ", ") + v.get<std::string>();
    return joined;
  }
  return value.dump();
}

ReportTable run_table(const ResultsFolder& folder) {
  ReportTable table{{"setting", "value"}, {}};
  table.rows.push_back({"results folder", folder.dir.string()});
  for (const char* key : {"name", "description", "normsim_version", "git_commit", "backend", "threads",
                          "started", "config_file", "swept_keys", "timings", "peak_rss_bytes"})
    if (folder.run.contains(key)) table.rows.push_back({key, json_cell(folder.run[key])});
  return table;
}

namespace {

const nlohmann::json& configs(const ResultsFolder& folder) {
  static const nlohmann::json none = nlohmann::json::array();
  return folder.run.contains("configs") && folder.run["configs"].is_array() ? folder.run["configs"] : none;
}

// Every key of every configuration's values, in the first configuration's order, then any later ones.
std::vector<std::string> value_keys(const nlohmann::json& list) {
  std::vector<std::string> keys;
  for (const auto& config : list)
    if (config.contains("values") && config["values"].is_object())
      for (const auto& [key, value] : config["values"].items())
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  return keys;
}

nlohmann::json value_of(const nlohmann::json& config, const std::string& key) {
  if (config.contains("values") && config["values"].is_object() && config["values"].contains(key))
    return config["values"][key];
  return nullptr;
}

bool is_constant(const nlohmann::json& list, const std::string& key) {
  return std::all_of(list.begin(), list.end(),
                     [&](const auto& c) { return value_of(c, key) == value_of(list[0], key); });
}

}  // namespace

ReportTable fixed_settings_table(const ResultsFolder& folder) {
  ReportTable table{{"key", "value"}, {}};
  const auto& list = configs(folder);
  for (const auto& key : value_keys(list))
    if (is_constant(list, key)) table.rows.push_back({key, json_cell(value_of(list[0], key))});
  return table;
}

ReportTable configs_table(const ResultsFolder& folder) {
  const auto& list = configs(folder);
  std::vector<std::string> varying;
  for (const auto& key : value_keys(list))
    if (!is_constant(list, key)) varying.push_back(key);
  ReportTable table{{"config", "seed"}, {}};
  table.header.insert(table.header.end(), varying.begin(), varying.end());
  for (const auto& config : list) {
    std::vector<std::string> row = {json_cell(config.value("id", nlohmann::json())),
                                    json_cell(config.value("seed", nlohmann::json()))};
    for (const auto& key : varying) row.push_back(json_cell(value_of(config, key)));
    table.rows.push_back(std::move(row));
  }
  return table;
}

ReportTable metrics_table(const ResultsFolder& folder) {
  ReportTable table{{"metric", "definition"}, {}};
  if (folder.run.contains("metrics") && folder.run["metrics"].is_object())
    for (const auto& [name, definition] : folder.run["metrics"].items())
      table.rows.push_back({name, json_cell(definition)});
  return table;
}

namespace {

// A statistic as check's report.md writes it: four significant digits.
std::string stat(const nlohmann::json& value) {
  if (!value.is_number_float()) return json_cell(value);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value.get<double>());
  return buffer;
}

// A side of a band or interval: JSON null is an open side.
std::string side(const nlohmann::json& value, const char* open) {
  return value.is_null() ? open : stat(value);
}

}  // namespace

ReportTable verdicts_table(const ResultsFolder& folder) {
  // The columns of check's report.md (check/report.cpp), so both reports read alike.
  ReportTable table{{"claim", "kind", "statement", "source", "predicted", "band", "band from",
                     "measured [95% CI]", "n", "verdict"},
                    {}};
  for (const Claim& claim : folder.claims) {
    std::string predicted = claim.predicted.is_null() ? "n/a" : stat(claim.predicted);
    if (claim.kind == "literature" && claim.meanfield.is_number() && claim.meanfield != claim.predicted)
      predicted += " (mean field " + stat(claim.meanfield) + ")";
    std::string verdict = claim.verdict;
    if (claim.samples_needed.is_number())
      verdict += " (~" + json_cell(claim.samples_needed) + " samples would decide)";
    table.rows.push_back({claim.id, claim.kind, claim.statement, claim.source, predicted,
                          "[" + side(claim.band_low, "-inf") + ", " + side(claim.band_high, "inf") + "]",
                          claim.band_source,
                          stat(claim.measured) + " [" + stat(claim.ci_low) + ", " + stat(claim.ci_high) +
                              "]" + (claim.decided_at.is_number() ? " at x = " + stat(claim.decided_at) : ""),
                          json_cell(claim.n), verdict});
  }
  return table;
}

ReportTable nonfinite_table(const ResultsFolder& folder) {
  ReportTable t{{"config", "pass", "what", "samples", "first layer"}, {}};
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<std::set<std::string>, int>> rows;
  for (const auto& r : folder.nonfinite) {
    auto& [samples, first] =
        rows[{r.config, r.pass, r.metric.empty() ? "the stream (all later metrics)" : r.metric}];
    first = samples.empty() ? r.layer : std::min(first, r.layer);
    samples.insert(r.sample);
  }
  for (const auto& [key, value] : rows)
    t.rows.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key),
                      std::to_string(value.first.size()), std::to_string(value.second)});
  return t;
}

namespace {

// "0 supported, 2 refuted, 1 inconclusive, 1 not testable at init" for the claims `take` picks: the three
// judged verdicts first, with their zeros (but for readings, whose words are their own), then any other
// verdict in the order it first appears.
std::string count_line(const ResultsFolder& folder, const std::function<bool(const Claim&)>& take,
                       bool readings) {
  std::vector<std::pair<std::string, int>> counts;
  if (!readings) counts = {{"supported", 0}, {"refuted", 0}, {"inconclusive", 0}};
  for (const Claim& claim : folder.claims) {
    if (!take(claim)) continue;
    auto it = std::find_if(counts.begin(), counts.end(), [&](auto& c) { return c.first == claim.verdict; });
    if (it == counts.end()) it = counts.insert(counts.end(), {claim.verdict, 0});
    ++it->second;
  }
  std::string line;
  for (const auto& [verdict, count] : counts)
    line += (line.empty() ? "" : ", ") + std::to_string(count) + " " + verdict;
  return line;
}

}  // namespace

std::string verdict_tally(const ResultsFolder& folder) {
  // One count per kind: the literature's verdicts, normsim's readings and its own derivations never add up.
  // A verdicts.json without kinds, or with one, gets the one flat count.
  std::vector<std::string> kinds;  // in the order they first appear ("" for a claim without one)
  for (const Claim& claim : folder.claims)
    if (std::find(kinds.begin(), kinds.end(), claim.kind) == kinds.end()) kinds.push_back(claim.kind);
  const std::string n = std::to_string(folder.claims.size()) + " claims";
  if (std::count_if(kinds.begin(), kinds.end(), [](const std::string& k) { return !k.empty(); }) < 2) {
    const bool readings = std::all_of(folder.claims.begin(), folder.claims.end(),
                                      [](const Claim& c) { return c.kind == "reading"; });
    return n + ": " +
           count_line(
               folder, [](const Claim&) { return true; }, readings);
  }
  std::string tally;
  for (const std::string& kind : kinds) {
    const auto of_kind = [&](const Claim& c) { return c.kind == kind; };
    tally += (tally.empty() ? "" : "; ") + (kind.empty() ? "no kind" : kind) + " " +
             std::to_string(std::count_if(folder.claims.begin(), folder.claims.end(), of_kind)) + ": " +
             count_line(folder, of_kind, kind == "reading");
  }
  return n + " (by kind) " + tally;
}

std::vector<FigureSection> figure_sections(const std::vector<RenderedFigure>& figures) {
  static const std::vector<std::pair<std::string, std::string>> order = {
      {"claim", "Claims"},
      {"profile", "Per-layer profiles"},
      {"gradients", "Gradient norms across layers"},
      {"depth", "Depth scaling"},
      {"heatmap", "Layer x depth heatmaps"},
      {"coord", "Coordinate checks"},
  };
  std::vector<FigureSection> sections;
  for (const auto& [kind, heading] : order) {
    FigureSection section{heading, {}};
    for (const auto& figure : figures)
      if (figure.kind == kind) section.figures.push_back(&figure);
    if (!section.figures.empty()) sections.push_back(std::move(section));
  }
  return sections;
}

}  // namespace normsim::plots
