// Writing the check's result files (see report.hpp).
#include "check/report.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <utility>

#include "io/atomic_file.hpp"
#include "io/csv_write.hpp"
#include "sim/run/config_schema.hpp"
#include "sim/run/results.hpp"
#include "sim/run/staged_folder.hpp"

namespace normsim::check {

namespace fs = std::filesystem;

namespace {

// JSON has no infinity: an open side of a band or interval is written as null.
nlohmann::json num(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}
nlohmann::json num(const std::optional<double>& v) {
  return v ? num(*v) : nlohmann::json();
}

std::string fmt(double v) {
  if (!std::isfinite(v)) return v > 0 ? "inf" : (v < 0 ? "-inf" : "n/a");
  std::ostringstream os;
  os.precision(4);
  os << v;
  return os.str();
}

std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

// Every configuration of every claim as one grid: the keys whose values differ between them are the columns;
// `records` and `seconds` gain each configuration's records and time, in the grid's order.
sim::Grid combined_grid(const std::vector<CheckedClaim>& claims, sim::GridRecords& records,
                        std::vector<double>& seconds) {
  sim::Grid g;
  g.name = "check";
  g.description = "normsim check: every simulation behind the claims";
  for (const auto& c : claims)
    for (std::size_t i = 0; i < c.spec.grid.configs.size(); ++i) {
      g.configs.push_back(c.spec.grid.configs[i]);
      records.push_back(c.measurement.records.at(i));
      seconds.push_back(c.measurement.config_seconds.at(i));
    }
  for (const auto& name : sim::key_columns(sim::set_in(g.configs))) {
    const sim::KeyInfo& key = *sim::find_key(name);
    if (name == "placement" || g.configs.empty()) continue;
    const auto first = sim::format_value(key.get(g.configs.front()));
    for (const auto& config : g.configs)
      if (sim::format_value(key.get(config)) != first) {
        g.swept_keys.emplace_back(name);
        break;
      }
  }
  return g;
}

std::string_view kind_heading(ClaimKind k) {
  switch (k) {
    case ClaimKind::literature:
      return "literature (the sources' own words)";
    case ClaimKind::reading:
      return "normsim's readings of a source";
    case ClaimKind::self:
      return "self (normsim's theory against its simulator)";
  }
  return "?";
}

}  // namespace

nlohmann::json verdict_json(const CheckedClaim& c) {
  const ClaimSpec& s = c.spec;
  const ClaimResult& r = c.result;
  nlohmann::json j;
  j["id"] = s.id;
  j["statement"] = s.statement;
  j["source"] = s.source;
  j["quote"] = s.quote;
  j["band_source"] = s.band_source;
  j["predicted"] = num(r.predicted);
  j["measured"] = num(r.estimate.value);
  j["ci_low"] = num(r.estimate.low);
  j["ci_high"] = num(r.estimate.high);
  j["verdict"] = verdict_words(r.decision.verdict, s.kind == ClaimKind::reading);
  j["figure_kind"] = s.figure_kind;
  j["x_label"] = s.x_label;
  j["y_label"] = s.y_label;
  j["log_x"] = s.figure_log_x;
  j["log_y"] = s.figure_log_y;
  // Extras: how the verdict was reached.
  j["kind"] = std::string(to_string(s.kind));
  j["backend"] = c.measurement.backend;
  j["device"] = c.measurement.device;
  j["reading_of"] = s.reading_of;
  j["testable_at_init"] = s.testable_at_init;
  j["judged"] = s.judged;
  j["looks"] = s.looks;
  j["confidence"] = s.confidence;
  j["fit"] = std::string(to_string(s.fit));
  j["metric"] = s.metric;
  j["se"] = num(r.estimate.se);
  j["n"] = r.estimate.n;
  j["band_low"] = num(r.band.low);
  j["band_high"] = num(r.band.high);
  // A profile's band bounds its deviation from the mean field, relative or absolute (the figure says which).
  j["band_relative"] = profile_band_is_relative(s);
  j["meanfield"] = num(r.meanfield);
  j["decided_at"] = num(r.decided_at);
  j["samples_needed"] =
      r.decision.samples_needed ? nlohmann::json(*r.decision.samples_needed) : nlohmann::json();
  j["seconds"] = c.seconds;
  j["note"] = r.note;
  return j;
}

std::string data_csv(const ClaimResult& r) {
  std::string out = "x,measured,se,predicted\n";
  for (const auto& d : r.data) {
    if (!std::isfinite(d.x) || !std::isfinite(d.measured)) continue;
    out += io::format_number(d.x) + "," + io::format_number(d.measured) + "," +
           io::format_number(std::isfinite(d.se) ? d.se : 0) + "," +
           (d.predicted && std::isfinite(*d.predicted) ? io::format_number(*d.predicted) : "") + "\n";
  }
  return out;
}

// "literature (30): 20 supported, 4 refuted, 3 inconclusive, 3 not testable at init" and the like, one line a
// kind: the literature's verdicts, normsim's readings and its own derivations are never added together.
std::string tally_by_kind(const std::vector<CheckedClaim>& claims) {
  std::string out;
  for (ClaimKind kind : {ClaimKind::literature, ClaimKind::reading, ClaimKind::self}) {
    std::vector<std::pair<std::string, int>> counts;
    int total = 0;
    for (const auto& c : claims) {
      if (c.spec.kind != kind) continue;
      ++total;
      const std::string w = verdict_words(c.result.decision.verdict, kind == ClaimKind::reading);
      auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& p) { return p.first == w; });
      if (it == counts.end()) it = counts.insert(counts.end(), {w, 0});
      ++it->second;
    }
    if (total == 0) continue;
    std::sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    out += "- " + std::string(kind_heading(kind)) + " (" + std::to_string(total) + "): ";
    for (std::size_t i = 0; i < counts.size(); ++i)
      out += (i ? ", " : "") + std::to_string(counts[i].second) + " " + counts[i].first;
    out += "\n";
  }
  return out;
}

namespace {

// Which backends and devices computed the claims' numbers (verdicts.json names each claim's).
std::string measured_on(const std::vector<CheckedClaim>& claims) {
  std::vector<std::pair<std::string, int>> seen;
  for (const auto& c : claims) {
    const std::string who = "`" + c.measurement.backend + "` on " + c.measurement.device;
    auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& p) { return p.first == who; });
    if (it == seen.end())
      seen.emplace_back(who, 1);
    else
      ++it->second;
  }
  std::string out = "Measured by:";
  for (const auto& [who, n] : seen)
    out += "\n- " + who + ": " + std::to_string(n) + (n == 1 ? " claim" : " claims");
  return out + "\n\n";
}

}  // namespace

std::string report_markdown(const std::vector<CheckedClaim>& claims, bool full, double seconds,
                            bool figures) {
  std::ostringstream md;
  md << "# normsim check\n\n"
     << claims.size() << " claims (" << (full ? "full" : "default") << " sweeps), " << fmt(seconds)
     << " s:\n\n"
     << tally_by_kind(claims)
     << "\nIntervals are 95 % (Student-t over independent samples; bootstrap for convergence claims; "
        "Bonferroni-widened for a claim read at several sample counts, its `looks`). A claim is supported "
        "when the whole interval lies inside the agreement band, refuted when it lies wholly outside "
        "(docs/claims.md). A literature claim judges a source's own words; a reading judges normsim's "
        "reading "
        "of a source and is consistent or inconsistent with that reading, never a verdict on the source; a "
        "self claim judges normsim's own theory. A claim about trained models is not testable at init (what "
        "init gives is reported); one on unconfirmed equations is reported per setting, not judged.\n\n"
     << measured_on(claims)
     << "| claim | kind | statement | source | predicted | band | band from | measured [CI] | n | verdict "
        "| figure |\n"
     << "|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& c : claims) {
    const auto& r = c.result;
    std::string verdict = verdict_words(r.decision.verdict, c.spec.kind == ClaimKind::reading);
    if (c.spec.kind == ClaimKind::reading &&
        (r.decision.verdict == Verdict::supported || r.decision.verdict == Verdict::refuted))
      verdict += " of " + c.spec.reading_of;
    if (r.decision.samples_needed)
      verdict += " (~" + std::to_string(*r.decision.samples_needed) + " samples would decide)";
    std::string predicted = r.predicted ? fmt(*r.predicted) : "n/a";
    if (r.meanfield && c.spec.kind != ClaimKind::self && !c.spec.meanfield)
      predicted += " (mean field " + fmt(*r.meanfield) + ")";
    md << "| `" << c.spec.id << "` | " << to_string(c.spec.kind) << " | " << cell(c.spec.statement) << " | "
       << cell(c.spec.source) << " | " << predicted << " | [" << fmt(r.band.low) << ", " << fmt(r.band.high)
       << "] | " << cell(c.spec.band_source) << " | " << fmt(r.estimate.value) << " [" << fmt(r.estimate.low)
       << ", " << fmt(r.estimate.high) << "]" << (r.decided_at ? " at x = " + fmt(*r.decided_at) : "")
       << (c.spec.looks.size() > 1 ? " (" + fmt(100 * c.spec.confidence) + " %)" : "") << " | "
       << r.estimate.n << " | " << verdict << " | "
       << (figures ? "[figure](figures/claim_" + c.spec.id + ".png)" : std::string("not drawn")) << " |\n";
  }
  md << "\n## Notes\n\n";
  for (const auto& c : claims)
    if (!c.result.note.empty()) md << "- `" << c.spec.id << "`: " << c.result.note << "\n";
  md << "\nData behind each figure: `claims/<id>/data.csv`; the simulations: `claims/<id>/summary.csv`.\n";
  return md.str();
}

void write_check_results(const fs::path& out, const std::vector<CheckedClaim>& claims, bool full,
                         const sim::Backend& backend, int threads, double seconds, bool figures) {
  // Every file or none, and claims/ holds exactly this check's claims (no folder of an earlier claim set).
  sim::StagedFolder staged(out);
  const fs::path stage = staged.path();
  fs::create_directories(stage / "claims");
  nlohmann::json verdicts = nlohmann::json::array();
  for (const auto& c : claims) {
    const fs::path dir = stage / "claims" / c.spec.id;
    fs::create_directories(dir);
    io::write_file_atomic(dir / "data.csv", data_csv(c.result));
    sim::write_summary_csv(dir / "summary.csv", c.spec.grid, c.measurement.records);
    verdicts.push_back(verdict_json(c));
  }
  sim::GridRecords records;
  sim::RunInfo info;
  const sim::Grid grid = combined_grid(claims, records, info.config_seconds);
  sim::write_summary_csv(stage / "summary.csv", grid, records);
  info.backend = backend.name();
  info.device = backend.device();
  info.threads = threads;
  info.started = sim::utc_now_iso8601();
  info.wall_seconds = seconds;
  info.peak_memory_bytes = backend.peak_memory_bytes();
  info.peak_rss_bytes = sim::peak_rss_bytes();
  sim::write_run_json(stage / "run.json", grid, info);
  io::write_file_atomic(stage / "verdicts.json", verdicts.dump(2) + "\n");
  io::write_file_atomic(stage / "report.md", report_markdown(claims, full, seconds, figures));
  staged.commit({"run.json"});
}

}  // namespace normsim::check
