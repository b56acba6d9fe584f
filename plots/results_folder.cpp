// Reading a results folder (see results_folder.hpp). Each file's problems are reported with its path and
// line.
#include "results_folder.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <set>

#include "io/csv_read.hpp"
#include "io_errors.hpp"
#include "plot_error.hpp"

namespace normsim::plots {

namespace fs = std::filesystem;

namespace {

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw input_error("cannot read " + path.string() + " (check that it exists and is readable)");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw input_error(path.string() + " is not valid JSON (" + e.what() + "); re-create it with normsim");
  }
}

void require_results_folder(const fs::path& dir) {
  if (!fs::is_directory(dir))
    throw input_error(
        "'" + dir.string() +
        "' is not a folder; pass the results folder that `normsim run` or `normsim check` wrote "
        "(the one holding run.json and summary.csv)");
  for (const char* file : {"run.json", "summary.csv"})
    if (!fs::is_regular_file(dir / file))
      throw input_error("'" + dir.string() + "' is not a normsim results folder: it has no " + file +
                        ". Pass the folder that `normsim run` or `normsim check` wrote (OUT in `normsim run "
                        "CONFIG --out OUT`), or run the simulation first");
}

// The index of row r: its l (stream) or k (sublayer) field, whichever is filled (docs/conventions.md).
int layer_index(const io::CsvTable& table, std::size_t r, int l, int k) {
  const auto& fields = table.rows[r];
  const bool has_l = !fields[static_cast<std::size_t>(l)].empty();
  if (has_l == !fields[static_cast<std::size_t>(k)].empty())
    throw input_error(table.where(r) + ": exactly one of the columns l and k must hold the index");
  const double value = io::parse_number(table, r, has_l ? l : k);
  if (value < 0 || value != std::floor(value))
    throw input_error(table.where(r) + ": the index must be a non-negative integer");
  return static_cast<int>(value);
}

// Whether row r of a table with a `step` column (step_column >= 0; -1: none, every row is step 0) belongs
// to another training step than `step`.
bool other_step(const io::CsvTable& table, std::size_t r, int step_column, int step) {
  if (step_column < 0) return step != 0;
  return io::parse_number(table, r, step_column) != double(step);
}

// The steps summary.csv holds, as "0, 1, 2" for an error message.
std::string steps_held(const io::CsvTable& table, int step_column) {
  std::set<long> steps;
  for (std::size_t r = 0; r < table.rows.size(); ++r)
    steps.insert(step_column < 0 ? 0 : long(io::parse_number(table, r, step_column)));
  std::string out;
  for (const long s : steps) out += (out.empty() ? "" : ", ") + std::to_string(s);
  return out;
}

// summary.csv: config,placement,<every other config key>,metric,l,k,[step,][lane,]mean,se,n
void read_summary(ResultsFolder& folder, int step, bool claims_only) {
  const io::CsvTable table = io::read_csv(folder.dir / "summary.csv");
  const int config = table.require("config");
  const int placement = table.require("placement");
  const int metric = table.require("metric");
  const int l = table.require("l");
  const int k = table.require("k");
  const int mean = table.require("mean");
  const int se = table.require("se");
  const int n = table.require("n");
  const int lane = table.find("lane");  // a grid with lanes: figures draw the lanes' mean
  const int step_column = table.find("step");
  if (config != 0 || placement != 1 || metric <= placement)
    throw input_error(table.path.string() +
                      ": the header must start with config,placement and have the config keys before metric "
                      "(docs/conventions.md)");
  for (int c = placement; c < metric; ++c) folder.keys.push_back(table.header[static_cast<std::size_t>(c)]);

  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& fields = table.rows[r];
    if (io::is_lane_row(fields, lane) || other_step(table, r, step_column, step)) continue;
    SummaryRow row;
    row.config = fields[static_cast<std::size_t>(config)];
    for (int c = placement; c < metric; ++c) row.keys.push_back(fields[static_cast<std::size_t>(c)]);
    row.layer = layer_index(table, r, l, k);
    row.metric = fields[static_cast<std::size_t>(metric)];
    row.mean = io::parse_number(table, r, mean);
    row.se = io::parse_number(table, r, se);
    row.n = static_cast<long>(io::parse_number(table, r, n));
    // A mean over zero finite samples carries nothing to plot: counted, and said on the figure.
    if (row.n == 0 || !std::isfinite(row.mean)) {
      folder.empty_rows.push_back(std::move(row));
      continue;
    }
    if (!std::isfinite(row.se)) row.se = 0;
    if (std::find(folder.metrics.begin(), folder.metrics.end(), row.metric) == folder.metrics.end())
      folder.metrics.push_back(row.metric);
    folder.summary.push_back(std::move(row));
  }
  if (folder.summary.empty() && folder.empty_rows.empty()) {
    if (claims_only) return;  // the claim figures read claims/<id>/data.csv
    throw input_error(table.path.string() + " has no rows at training step " + std::to_string(step) +
                      " (its steps: " + steps_held(table, step_column) + "); choose one of those");
  }
  if (folder.summary.empty())
    throw input_error(table.path.string() +
                      " has no finite values: nothing to plot (see nonfinite.csv for the samples that "
                      "diverged)");
}

// nonfinite.csv (optional): config,sample,pass,layer,metric[,step]
void read_nonfinite(ResultsFolder& folder, int step) {
  const fs::path path = folder.dir / "nonfinite.csv";
  if (!fs::exists(path)) return;
  const io::CsvTable table = io::read_csv(path);
  const int config = table.require("config"), sample = table.require("sample"), pass = table.require("pass");
  const int layer = table.require("layer"), metric = table.find("metric"), step_column = table.find("step");
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    if (other_step(table, r, step_column, step)) continue;
    const auto& f = table.rows[r];
    folder.nonfinite.push_back({f[std::size_t(config)], f[std::size_t(sample)], f[std::size_t(pass)],
                                metric < 0 ? "" : f[std::size_t(metric)],
                                static_cast<int>(io::parse_number(table, r, layer))});
  }
}

// theory.csv (optional): config,<config keys>,metric,l,k,[step,][lane,]value; the mean field is of init
// (step 0), so a figure of a later step draws none.
void read_theory(ResultsFolder& folder, int step) {
  const fs::path path = folder.dir / "theory.csv";
  if (!fs::exists(path)) return;
  const io::CsvTable table = io::read_csv(path);
  const int config = table.require("config");
  const int metric = table.require("metric");
  const int l = table.require("l");
  const int k = table.require("k");
  const int value = table.require("value"), lane = table.find("lane"), step_column = table.find("step");
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const double v = io::parse_number(table, r, value);
    if (!std::isfinite(v) || io::is_lane_row(table.rows[r], lane) || other_step(table, r, step_column, step))
      continue;
    folder.theory[{table.rows[r][static_cast<std::size_t>(config)], layer_index(table, r, l, k),
                   table.rows[r][static_cast<std::size_t>(metric)]}] = v;
  }
}

std::string json_string(const nlohmann::json& claim, const char* key, const fs::path& path) {
  if (!claim.contains(key) || claim[key].is_null()) return "";
  if (!claim[key].is_string())
    throw input_error(path.string() + ": claim field '" + key + "' must be a string");
  return claim[key].get<std::string>();
}

bool json_bool(const nlohmann::json& claim, const char* key, const fs::path& path) {
  if (!claim.contains(key) || claim[key].is_null()) return false;
  if (!claim[key].is_boolean())
    throw input_error(path.string() + ": claim field '" + key + "' must be true or false");
  return claim[key].get<bool>();
}

std::vector<ClaimPoint> read_claim_data(const fs::path& path, const std::string& id) {
  if (!fs::is_regular_file(path))
    throw input_error("verdicts.json lists claim '" + id + "' but " + path.string() +
                      " is missing; re-run `normsim check` to write it");
  const io::CsvTable table = io::read_csv(path);
  const int x = table.require("x");
  const int measured = table.require("measured");
  const int se = table.require("se");
  const int predicted = table.require("predicted");
  std::vector<ClaimPoint> points;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    ClaimPoint point{io::parse_number(table, r, x), io::parse_number(table, r, measured), 0, std::nullopt};
    if (!table.rows[r][static_cast<std::size_t>(se)].empty()) point.se = io::parse_number(table, r, se);
    if (!table.rows[r][static_cast<std::size_t>(predicted)].empty())
      point.predicted = io::parse_number(table, r, predicted);
    if (!std::isfinite(point.se)) point.se = 0;
    if (std::isfinite(point.x) && std::isfinite(point.measured)) points.push_back(point);
  }
  return points;
}

// verdicts.json (optional, from `normsim check`): a list of claims, or {"claims": [...]}.
void read_verdicts(ResultsFolder& folder) {
  const fs::path path = folder.dir / "verdicts.json";
  if (!fs::exists(path)) return;
  folder.has_verdicts = true;
  nlohmann::json doc = read_json(path);
  if (doc.is_object() && doc.contains("claims")) doc = doc["claims"];
  if (!doc.is_array()) throw input_error(path.string() + " must hold a list of claims");
  for (const auto& entry : doc) {
    if (!entry.is_object() || !entry.contains("id"))
      throw input_error(path.string() + ": every claim must be an object with an 'id'");
    Claim claim;
    claim.id = entry["id"].is_string() ? entry["id"].get<std::string>() : entry["id"].dump();
    // The id names a folder and a figure file, so it may not climb out of OUT or need quoting.
    const bool safe_id = !claim.id.empty() && claim.id != "." && claim.id != ".." &&
                         std::all_of(claim.id.begin(), claim.id.end(), [](unsigned char c) {
                           return std::isalnum(c) || c == '_' || c == '-' || c == '.';
                         });
    if (!safe_id)
      throw input_error(path.string() + ": claim id '" + claim.id +
                        "' may only use letters, digits, '_', '-' and '.'");
    claim.statement = json_string(entry, "statement", path);
    claim.source = json_string(entry, "source", path);
    claim.band_source = json_string(entry, "band_source", path);
    claim.verdict = json_string(entry, "verdict", path);
    claim.figure_kind = json_string(entry, "figure_kind", path);
    claim.x_label = json_string(entry, "x_label", path);
    claim.y_label = json_string(entry, "y_label", path);
    claim.metric = json_string(entry, "metric", path);
    claim.fit = json_string(entry, "fit", path);
    claim.kind = json_string(entry, "kind", path);
    claim.log_x = json_bool(entry, "log_x", path);
    claim.log_y = json_bool(entry, "log_y", path);
    claim.band_relative = json_bool(entry, "band_relative", path);
    for (auto [field, key] : {std::pair{&claim.predicted, "predicted"},
                              {&claim.measured, "measured"},
                              {&claim.ci_low, "ci_low"},
                              {&claim.ci_high, "ci_high"},
                              {&claim.band_low, "band_low"},
                              {&claim.band_high, "band_high"},
                              {&claim.n, "n"},
                              {&claim.meanfield, "meanfield"},
                              {&claim.decided_at, "decided_at"},
                              {&claim.samples_needed, "samples_needed"}})
      *field = entry.value(key, nlohmann::json());
    claim.points = read_claim_data(folder.dir / "claims" / claim.id / "data.csv", claim.id);
    folder.claims.push_back(std::move(claim));
  }
}

}  // namespace

int ResultsFolder::key_index(const std::string& key) const {
  const auto it = std::find(keys.begin(), keys.end(), key);
  return it == keys.end() ? -1 : static_cast<int>(it - keys.begin());
}

std::optional<double> ResultsFolder::theory_at(const std::string& config, int layer,
                                               const std::string& metric) const {
  const auto it = theory.find({config, layer, metric});
  if (it == theory.end()) return std::nullopt;
  return it->second;
}

bool ResultsFolder::has_metric(const std::string& metric) const {
  return std::find(metrics.begin(), metrics.end(), metric) != metrics.end();
}

std::string ResultsFolder::left_out(const std::string& metric, const std::vector<int>& figure_keys,
                                    const std::vector<std::string>& values) const {
  const auto in_figure = [&](const SummaryRow& r) {
    for (std::size_t i = 0; i < figure_keys.size(); ++i)
      if (r.keys[std::size_t(figure_keys[i])] != values[i]) return false;
    return true;
  };
  std::set<std::string> configs, empty;
  for (const auto& r : summary)
    if (in_figure(r)) configs.insert(r.config);
  for (const auto& r : empty_rows)
    if (r.metric == metric && in_figure(r)) configs.insert(r.config), empty.insert(r.config);
  std::set<std::pair<std::string, std::string>> samples;
  for (const auto& r : nonfinite)  // the mean field's rows (pass meanfield, sample -1) are no samples
    if ((r.metric.empty() || r.metric == metric) && configs.count(r.config) && r.pass != "meanfield")
      samples.insert({r.config, r.sample});
  std::string s, list;
  if (!samples.empty())
    s = std::to_string(samples.size()) + " sample(s) with NaN/Inf left out (nonfinite.csv)";
  for (const auto& c : empty) list += (list.empty() ? "" : ", ") + c;
  if (!list.empty())
    s += (s.empty() ? "" : "; ") + std::string("no finite value at some layers of config ") + list;
  return s;
}

std::string ResultsFolder::metric_description(const std::string& metric) const {
  if (run.contains("metrics") && run["metrics"].is_object() && run["metrics"].contains(metric)) {
    const auto& definition = run["metrics"][metric];
    if (definition.is_string()) return metric + " (" + definition.get<std::string>() + ")";
  }
  return metric;
}

ResultsFolder load_results(const fs::path& dir, int step, bool claims_only) {
  require_results_folder(dir);
  ResultsFolder folder;
  folder.dir = dir;
  folder.step = step;
  folder.run = read_json(dir / "run.json");
  if (!folder.run.is_object()) throw input_error((dir / "run.json").string() + " must hold a JSON object");
  as_plot_error([&] {
    read_summary(folder, step, claims_only);
    read_theory(folder, step);
    read_nonfinite(folder, step);
    read_verdicts(folder);
  });
  return folder;
}

}  // namespace normsim::plots
