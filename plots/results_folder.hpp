// A normsim results folder read into memory: run.json, summary.csv, and the optional theory.csv and
// verdicts.json + claims/<id>/data.csv (formats in docs/conventions.md). Everything is read and checked
// before any figure is drawn, so a bad folder fails before a single file is written.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

namespace normsim::plots {

// One line of summary.csv: a metric's mean over samples at one layer of one configuration.
struct SummaryRow {
  std::string config;
  std::vector<std::string> keys;  // values of ResultsFolder::keys, in that order
  int layer = 0;  // the l or k index, whichever the metric has (summary.csv's l and k columns)
  std::string metric;
  double mean = 0;
  double se = 0;
  long n = 0;
};

// One point of claims/<id>/data.csv.
struct ClaimPoint {
  double x = 0;
  double measured = 0;
  double se = 0;
  std::optional<double> predicted;  // empty field: no prediction at this x
};

// One entry of verdicts.json with its data.
struct Claim {
  std::string id;
  std::string statement;
  std::string source;
  std::string band_source;  // where the agreement band comes from ("" when verdicts.json has none)
  std::string verdict;
  std::string figure_kind;
  std::string x_label;
  std::string y_label;
  std::string metric;  // the summary.csv metric the claim measures ("" when verdicts.json has none)
  std::string fit;     // how the statistic was fitted: linear (slope), powerlaw (exponent), ratio, ...
  bool log_x = false;
  bool log_y = false;
  nlohmann::json predicted, measured, ci_low, ci_high;  // numbers, or whatever check wrote
  // The range of the statistic that supports the claim (band_low/band_high; null or absent: unbounded on
  // that side), in the units of `measured`.
  nlohmann::json band_low, band_high;
  // A profile claim's band bounds the relative deviation y / meanfield - 1 (else y - meanfield); absent:
  // false.
  bool band_relative = false;
  // For the report's verdict table (check's report.md columns): the claim's kind (self, literature), sample
  // count, mean-field value, the x at which it was decided and the samples that would decide it.
  std::string kind;
  nlohmann::json n, meanfield, decided_at, samples_needed;
  std::vector<ClaimPoint> points;
};

// One row of nonfinite.csv: a sample whose stream (metric empty) or one statistic held NaN or Inf.
struct NonFiniteRow {
  std::string config, sample, pass, metric;
  int layer = 0;
};

struct ResultsFolder {
  std::filesystem::path dir;
  int step = 0;                   // the training step whose rows were read (PlotOptions::step)
  nlohmann::json run;             // run.json as written
  std::vector<std::string> keys;  // "placement", then summary.csv's other config-key columns in file order
  std::vector<SummaryRow> summary;
  std::vector<std::string> metrics;  // in order of first appearance in summary.csv
  std::map<std::tuple<std::string, int, std::string>, double> theory;  // (config, layer, metric) -> value
  std::vector<NonFiniteRow> nonfinite;                                 // nonfinite.csv (absent file: none)
  // The rows of summary.csv with n = 0 (no finite sample at that layer): nothing to draw, said on the figure.
  std::vector<SummaryRow> empty_rows;
  bool has_verdicts = false;
  std::vector<Claim> claims;

  int key_index(const std::string& key) const;  // -1 if absent
  std::optional<double> theory_at(const std::string& config, int layer, const std::string& metric) const;
  bool has_metric(const std::string& metric) const;
  // What a figure of `metric` leaves out, over the configs whose keys `figure_keys` hold `values`: "" when
  // nothing, else a sentence naming the samples with NaN or Inf (nonfinite.csv) and the configs with no
  // finite value at some layer. Every figure says it, on the plot and in its caption.
  std::string left_out(const std::string& metric, const std::vector<int>& figure_keys = {},
                       const std::vector<std::string>& values = {}) const;
  // run.json's definition of a metric (its `metrics` entry), or the metric's name when it has none.
  std::string metric_description(const std::string& metric) const;
};

// Reads and checks a results folder, the rows of training step `step` only (PlotOptions::step); throws an
// input PlotError saying what is missing or malformed, or which steps the folder has when `step` is not one.
// `claims_only` (a check's claim figures, drawn from claims/<id>/data.csv): a step with no rows is no error,
// as in a check whose claims are all read at training steps > 0.
ResultsFolder load_results(const std::filesystem::path& dir, int step = 0, bool claims_only = false);

}  // namespace normsim::plots
