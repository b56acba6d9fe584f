// The coordinate check of a results folder (see coord.hpp).
#include "check/coord.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "io/csv_read.hpp"
#include "stats/growth.hpp"
#include "theory/scaling_exponents.hpp"

namespace normsim::check {

namespace {

namespace fs = std::filesystem;
using theory::LayerGroup;
using theory::ScalingAxis;

// Per sample, NaN where a sample has no value.
using BySample = std::vector<double>;
// swept value -> samples.
using BySwept = std::map<double, BySample>;

struct Series {        // one metric of one setting: index -> step -> swept value -> samples
  bool stream = true;  // indexed by l (x_l), else by k (sublayer k)
  std::map<int, std::map<int, BySwept>> values;
};

struct Setting {
  std::vector<std::string> keys;  // every key's value but the swept one's
  std::map<std::string, Series> metrics;
};

struct Folder {
  std::vector<std::string> key_names;  // the header's key columns but the swept one
  std::vector<Setting> settings;
};

void store(BySample& by_sample, std::size_t sample, double value) {
  if (by_sample.size() <= sample) by_sample.resize(sample + 1, std::nan(""));
  by_sample[sample] = value;
}

double number(const io::CsvTable& t, std::size_t row, int column) {
  return io::parse_number(t, row, column);
}

Folder read_folder(const fs::path& layers_csv, const std::string& key) {
  const io::CsvTable t = io::read_csv(layers_csv);
  const int sample = t.require("sample"), metric = t.require("metric"), l = t.require("l"),
            k = t.require("k");
  const int value = t.require("value"), step = t.find("step"), lane = t.find("lane"), swept = t.require(key);
  Folder f;
  for (int c = 1; c < sample; ++c)
    if (c != swept) f.key_names.push_back(t.header[std::size_t(c)]);
  std::map<std::vector<std::string>, std::size_t> setting_of;
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    const auto& row = t.rows[r];
    if (io::is_lane_row(row, lane)) continue;
    std::vector<std::string> keys;
    for (int c = 1; c < sample; ++c)
      if (c != swept) keys.push_back(row[std::size_t(c)]);
    const auto [it, added] = setting_of.try_emplace(keys, f.settings.size());
    if (added) f.settings.push_back({keys, {}});
    Series& s = f.settings[it->second].metrics[row[std::size_t(metric)]];
    s.stream = !row[std::size_t(l)].empty();
    const int index = int(number(t, r, s.stream ? l : k));
    const int at = step < 0 || row[std::size_t(step)].empty() ? 0 : int(number(t, r, step));
    store(s.values[index][at][number(t, r, swept)], std::size_t(number(t, r, sample)), number(t, r, value));
  }
  return f;
}

// "key=value; ..." of the keys whose values differ between settings.
std::vector<std::string> setting_names(const Folder& f) {
  std::vector<std::string> names(f.settings.size());
  for (std::size_t c = 0; c < f.key_names.size(); ++c) {
    std::set<std::string> values;
    for (const auto& s : f.settings) values.insert(s.keys[c]);
    if (values.size() < 2) continue;
    for (std::size_t i = 0; i < f.settings.size(); ++i)
      names[i] += (names[i].empty() ? "" : "; ") + f.key_names[c] + "=" + f.settings[i].keys[c];
  }
  return names;
}

std::string key_value(const Folder& f, const Setting& s, std::string_view name) {
  for (std::size_t c = 0; c < f.key_names.size(); ++c)
    if (f.key_names[c] == name) return s.keys[c];
  return "";
}

// The preset the predictions are read for: none where the setting is not the rows' (Pre-LN, Adam); the
// default init is sp's variance class (preset sp equals parametrization none with init fanin, bit for bit).
std::string prediction_preset(const Folder& f, const Setting& s) {
  if (key_value(f, s, "placement") != theory::kExponentPlacement ||
      key_value(f, s, "update") != theory::kExponentOptimizer)
    return "";
  const std::string p = key_value(f, s, "parametrization");
  if (p == "none" && key_value(f, s, "init") == "fanin") return "sp";
  return p;
}

// One layer group of a series at one step: swept value -> samples.
using Group = std::pair<std::string, BySwept>;

// Each sample's mean over the indices, or its value at the last index, per swept value.
BySwept reduce_layers(const std::map<int, std::map<int, BySwept>>& values, int step, bool mean) {
  std::map<double, std::pair<int, BySample>> acc;  // swept -> (last index seen, sums or values)
  for (const auto& [index, steps] : values) {
    const auto at = steps.find(step);
    if (at == steps.end()) continue;
    for (const auto& [x, samples] : at->second) {
      auto& [last, out] = acc[x];
      if (out.size() < samples.size()) out.resize(samples.size(), mean ? 0.0 : std::nan(""));
      for (std::size_t s = 0; s < samples.size(); ++s) out[s] = mean ? out[s] + samples[s] : samples[s];
      last = index + 1;  // a count for the mean (indices run 0.. with no gap)
    }
  }
  BySwept reduced;
  for (auto& [x, pair] : acc) {
    for (auto& v : pair.second) v = mean ? v / pair.first : v;
    reduced[x] = pair.second;
  }
  return reduced;
}

// The layer groups fitted: every index present at every swept value (a width sweep) or index 0 and the last
// (a depth sweep, where an index's position in the stack moves), and the layer mean.
std::vector<Group> layer_groups(const Series& series, int step, ScalingAxis axis, std::size_t swept_count) {
  std::vector<Group> groups;
  for (const auto& [index, steps] : series.values) {
    const auto at = steps.find(step);
    if (at == steps.end() || at->second.size() != swept_count) continue;
    if (axis == ScalingAxis::width || index == 0) groups.push_back({std::to_string(index), at->second});
  }
  if (axis == ScalingAxis::depth) groups.push_back({"last", reduce_layers(series.values, step, false)});
  groups.push_back({"mean", reduce_layers(series.values, step, true)});
  return groups;
}

LayerGroup theory_layers(const std::string& layers, bool stream, ScalingAxis axis) {
  if (layers == "last") return LayerGroup::last;
  // The input x_0 is fixed (no embedding is trained): it is no layer of the width rows.
  if (layers == "0" && (axis == ScalingAxis::depth || stream)) return LayerGroup::first;
  return LayerGroup::any;
}

std::optional<Estimate> fit_exponent(const BySwept& values) {
  std::vector<double> x;
  std::size_t samples = 0;
  for (const auto& [v, by_sample] : values) x.push_back(v), samples = std::max(samples, by_sample.size());
  std::vector<std::vector<double>> rows(samples, std::vector<double>(x.size(), std::nan("")));
  std::size_t i = 0;
  for (const auto& [v, by_sample] : values) {
    for (std::size_t s = 0; s < by_sample.size(); ++s) rows[s][i] = by_sample[s];
    ++i;
  }
  const auto fit = stats::fit_growth(x, rows, stats::Growth::power_law);
  if (!fit) return std::nullopt;
  return fit->line.slope;
}

CoordFit judge(CoordFit fit, const theory::ExponentQuery& query) {
  if (const auto* row = theory::predicted_exponent(query)) {
    fit.predicted = row->exponent;
    fit.source = std::string(row->source);
  }
  if (const auto band = theory::exponent_band(query)) fit.band = Band{band->low, band->high};
  if (!fit.exponent)
    fit.decision.verdict = Verdict::no_measurement;
  else if (!fit.band)
    fit.decision.verdict = Verdict::not_judged;
  else
    fit.decision = decide(*fit.exponent, *fit.band);
  return fit;
}

void add_lines(CoordResult& result, const std::string& setting, const std::string& metric,
               const BySwept& means, int step) {
  for (const auto& [x, by_sample] : means) {
    std::vector<double> finite;
    for (double v : by_sample)
      if (std::isfinite(v)) finite.push_back(v);
    if (!finite.empty()) result.lines.push_back({setting, metric, x, step, mean_ci(finite)});
  }
}

}  // namespace

CoordResult coord_fits(const fs::path& out, const std::string& key) {
  const ScalingAxis axis = key == "depth" ? ScalingAxis::depth : ScalingAxis::width;
  if (key != "depth" && key != "width")
    throw std::runtime_error("a coordinate check sweeps width or depth, not '" + key + "'");
  const Folder f = read_folder(out / "layers.csv", key);
  const auto names = setting_names(f);
  CoordResult result{key, {}, {}};
  for (std::size_t i = 0; i < f.settings.size(); ++i) {
    const std::string preset = prediction_preset(f, f.settings[i]);
    for (const auto& [metric, series] : f.settings[i].metrics) {
      std::set<int> steps;
      std::set<double> swept;
      for (const auto& [index, by_step] : series.values)
        for (const auto& [s, by_x] : by_step) {
          steps.insert(s);
          for (const auto& [x, v] : by_x) swept.insert(x);
        }
      if (swept.size() < 2)
        throw std::runtime_error((out / "layers.csv").string() + ": '" + key + "' takes " +
                                 std::to_string(swept.size()) + " value(s) for " + metric +
                                 "; a coordinate check needs two or more");
      for (int s : steps)
        for (const auto& [layers, values] : layer_groups(series, s, axis, swept.size())) {
          CoordFit fit{names[i], preset, metric, layers, s, fit_exponent(values), {}, {}, {}, {}};
          const LayerGroup group = theory_layers(layers, series.stream, axis);
          result.fits.push_back(judge(std::move(fit), {axis, preset, metric, group, s}));
          if (layers == "mean") add_lines(result, names[i], metric, values, s);
        }
    }
  }
  return result;
}

}  // namespace normsim::check
