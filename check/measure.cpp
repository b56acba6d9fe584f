// Measurement (see measure.hpp).
#include "check/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "check/torch_block.hpp"
#include "meanfield_of/spec_from_config.hpp"
#include "sim/metrics.hpp"
#include "sim/run/config_schema.hpp"
#include "stats/estimate.hpp"
#include "theory/meanfield.hpp"
#include "vocab/sublayer_layout.hpp"

namespace normsim::check {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// An entry that came out NaN or Inf (the record's nonfinite lists, the mean field's overflow), as against
// NaN, an entry the metric does not have (gradw_w2 at an attention sublayer). A pick or reduction that
// meets it is NaN: it never falls back to an earlier finite entry.
constexpr double kPoison = std::numeric_limits<double>::infinity();

// A metric expression "a*b/c/d" evaluated left to right, ((a * b) / c) / d, entry by entry, each factor's
// series from `get` (empty: not available, and then neither is the product).
std::vector<double> left_to_right(const std::string& metric,
                                  const std::function<std::vector<double>(const std::string&)>& get) {
  std::vector<double> out;
  std::size_t start = 0;
  char op = '*';
  while (true) {
    const std::size_t end = metric.find_first_of("*/", start);
    const std::vector<double> v = get(metric.substr(start, end == std::string::npos ? end : end - start));
    if (v.empty()) return {};
    if (out.empty()) out.assign(v.size(), 1.0);
    if (v.size() != out.size())
      throw ClaimError("metric '" + metric + "' mixes layer and sublayer metrics (no common index)");
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = op == '*' ? out[i] * v[i] : out[i] / v[i];
    if (end == std::string::npos) return out;
    op = metric[end], start = end + 1;
  }
}

std::vector<double> mf_series(const theory::MeanFieldProfile& p, const std::string& metric) {
  std::vector<double> out = left_to_right(metric, [&](const std::string& name) {
    std::vector<double> v;
    if (const theory::Series* s = p.metric(name))
      for (const auto& e : *s) v.push_back(e ? *e : kNaN);
    return v;
  });
  // Where the mean field overflowed it predicts nothing: poison, never the last finite entry before it.
  for (const auto& bad : p.nonfinite)
    for (const auto& name : factors(metric))
      if (bad.metric == name && std::size_t(bad.index) < out.size()) out[std::size_t(bad.index)] = kPoison;
  return out;
}

// ln(max / min) of the finite positive entries of s over `layers`: 0 iff they are all equal.
double log_range(const ClaimSpec& c, const std::vector<double>& s) {
  double lo = kNaN, hi = kNaN;
  for (int i : layer_range(static_cast<int>(s.size()), c.layers)) {
    if (std::isinf(s[i])) return kNaN;
    if (std::isfinite(s[i]) && s[i] > 0) lo = std::fmin(lo, s[i]), hi = std::fmax(hi, s[i]);
  }
  return std::log(hi / lo);
}

// The per-config scalar a claim reads from one series.
double reduce(const ClaimSpec& c, const std::vector<double>& s, const std::string& expr) {
  if (c.reduce == "value") return pick(s, expr);
  if (c.reduce == "logrange") return log_range(c, s);
  std::vector<double> x, y;
  for (int i : layer_range(static_cast<int>(s.size()), c.layers)) {
    if (std::isinf(s[i])) return kNaN;
    const double v = c.reduce == "logslope" ? std::log(s[i]) : s[i];
    if (std::isfinite(v)) x.push_back(i), y.push_back(v);
  }
  return stats::ols_slope(x, y);
}

}  // namespace

// Every weight-gradient norm: the table's gradw_* rows (not one range: a new weight's row is appended).
std::vector<int> gradient_metrics() {
  std::vector<int> ids;
  for (int id = 0; id < sim::metric::count; ++id)
    if (sim::metric_table()[std::size_t(id)].name.starts_with("gradw_")) ids.push_back(id);
  return ids;
}

namespace {

// gradw_layer (measure.hpp): the squares of every finite gradw_* of a sublayer, summed over its layer.
std::vector<double> layer_gradient(const sim::SampleRecord& record, int span) {
  std::vector<double> sum;
  for (const int id : gradient_metrics()) {
    if (static_cast<std::size_t>(id) >= record.values.size()) continue;
    const auto& v = record.values[static_cast<std::size_t>(id)];
    if (sum.empty()) sum.assign(v.size(), 0.0);
    for (std::size_t k = 0; k < v.size() && k < sum.size(); ++k)
      if (std::isfinite(v[k])) sum[k] += v[k] * v[k];
  }
  std::vector<double> out(sum.size(), kNaN);
  for (std::size_t first = 0; first < sum.size(); first += static_cast<std::size_t>(span)) {
    const std::size_t end = std::min(sum.size(), first + static_cast<std::size_t>(span));
    double layer = 0;
    for (std::size_t k = first; k < end; ++k) layer += sum[k];
    for (std::size_t k = first; k < end; ++k) out[k] = layer > 0 ? std::sqrt(layer) : kNaN;
  }
  return out;
}

// The entries [from, to) of a metric that a stream NaN or Inf first seen at x_L spoils: forward, the stream
// from x_L on (a sublayer k maps x_k to x_{k+1}: k >= L - 1) and every gradient; backward, the gradients
// from the output down to x_L (stream l <= L, sublayer k <= L).
std::pair<std::size_t, std::size_t> spoiled(const sim::NonFinite& bad, const sim::MetricInfo& m,
                                            std::size_t n) {
  const bool stream = m.index == sim::MetricIndex::stream;
  const std::size_t at = static_cast<std::size_t>(std::max(bad.layer, 0));
  if (bad.pass == "forward") {
    if (m.pass == sim::MetricPass::backward) return {0, n};
    return {std::min(n, stream ? at : (at > 0 ? at - 1 : 0)), n};
  }
  if (m.pass == sim::MetricPass::forward) return {0, 0};
  return {0, std::min(n, at + 1)};
}

// Marks with kPoison every entry of `out` that the record says came out NaN or Inf: the NaN entries in the
// region a non-finite stream spoils (spoiled()), and the statistics listed one by one (for gradw_layer, the
// layer holding one).
void poison(const sim::SampleRecord& record, const std::string& metric, int span, std::vector<double>& out) {
  const auto table = sim::metric_table();
  for (const auto& name : factors(metric)) {
    std::vector<int> ids =
        name == kLayerGradient ? gradient_metrics() : std::vector<int>{sim::metric_id(name)};
    const int group = name == kLayerGradient ? std::max(span, 1) : 1;
    for (const int id : ids) {
      if (id < 0) continue;
      if (record.nonfinite) {  // a finite entry there is a real value the stream gave before it went bad
        const auto [from, to] = spoiled(*record.nonfinite, table[std::size_t(id)], out.size());
        for (std::size_t i = from; i < to; ++i)
          if (std::isnan(out[i])) out[i] = kPoison;
      }
      for (const auto& stat : record.nonfinite_statistics)
        if (stat.metric == id)
          for (int i = stat.layer / group * group; i < (stat.layer / group + 1) * group; ++i)
            if (std::size_t(i) < out.size()) out[std::size_t(i)] = kPoison;
    }
  }
}

std::optional<double> finite(double v) {
  return std::isfinite(v) ? std::optional(v) : std::nullopt;
}

}  // namespace

std::vector<std::string> factors(const std::string& metric) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t op; (op = metric.find_first_of("*/", start)) != std::string::npos; start = op + 1)
    out.push_back(metric.substr(start, op - start));
  out.push_back(metric.substr(start));
  return out;
}

std::string layer_expr_problem(const std::string& expr, int size) {
  if (expr == "first" || expr == "last" || expr == "max" || expr == "min") return "";
  std::size_t used = 0;
  long i = 0;
  try {
    i = std::stol(expr, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != expr.size() || expr.empty())
    return "'" + expr + "': expected first, last, max, min or an integer";
  if (i < -size || i >= size)
    return "layer " + expr + " is outside the " + std::to_string(size) + " entries (0.." +
           std::to_string(size - 1) + ", or negative from the end) of the shallowest configuration";
  return "";
}

bool per_layer(const ClaimSpec& c) {
  return c.x_key == "layer" && c.fit != FitKind::ratio && c.fit != FitKind::convergence &&
         c.reduce == "value";
}

int layer_span(const sim::Config& config) {
  return vocab::layout(config.sublayer).size;
}

std::vector<double> series(const sim::SampleRecord& record, const std::string& metric, int layer_span) {
  std::vector<double> out = left_to_right(metric, [&](const std::string& name) {
    if (name == kLayerGradient) return layer_gradient(record, layer_span);
    const int id = sim::metric_id(name);
    if (id < 0 || static_cast<std::size_t>(id) >= record.values.size())
      throw ClaimError("unknown metric '" + name + "' (normsim list metrics)");
    return record.values[static_cast<std::size_t>(id)];
  });
  poison(record, metric, layer_span, out);
  return out;
}

double pick(const std::vector<double>& v, const std::string& expr) {
  // first / last: the first / last entry the metric has (NaN entries are ones it does not have); an Inf
  // there (poison: it came out non-finite) gives NaN.
  if (expr == "first" || expr == "last") {
    for (std::size_t j = 0; j < v.size(); ++j) {
      const std::size_t i = expr == "first" ? j : v.size() - 1 - j;
      if (!std::isnan(v[i])) return std::isfinite(v[i]) ? v[i] : kNaN;
    }
    return kNaN;
  }
  if (expr == "max" || expr == "min") {
    double best = kNaN;
    for (double x : v) {
      if (std::isinf(x)) return kNaN;
      if (std::isfinite(x) && (!std::isfinite(best) || (expr == "max" ? x > best : x < best))) best = x;
    }
    return best;
  }
  const std::string bad = layer_expr_problem(expr, static_cast<int>(v.size()));
  if (bad.find("expected") != std::string::npos) throw ClaimError("layer " + bad);
  long i = std::stol(expr);
  if (i < 0) i += static_cast<long>(v.size());
  if (i < 0 || i >= static_cast<long>(v.size())) return kNaN;
  return std::isfinite(v[static_cast<std::size_t>(i)]) ? v[static_cast<std::size_t>(i)] : kNaN;
}

double x_of(const ClaimSpec& c, const sim::Config& config, std::size_t i) {
  if (c.x_key == "layer") return config.depth;
  const auto value = sim::find_key(c.x_key)->get(config);
  double x = kNaN;
  if (auto p = std::get_if<std::int64_t>(&value)) x = static_cast<double>(*p);
  if (auto p = std::get_if<double>(&value)) x = *p;
  if (auto p = std::get_if<bool>(&value)) x = *p;
  return std::isfinite(x) ? x : static_cast<double>(i);  // a string key (placement): points by position
}

std::vector<int> layer_range(int size, const std::string& range) {
  int a = 0, b = size;
  if (range != "all") {
    const auto colon = range.find(':');
    if (colon == std::string::npos) throw ClaimError("layers '" + range + "': expected all or A:B");
    const auto part = [&](const std::string& text, int fallback) {
      if (text.empty()) return fallback;
      int v = 0;
      try {
        v = std::stoi(text);
      } catch (const std::exception&) {
        throw ClaimError("layers '" + range + "': expected all or A:B with integers");
      }
      return v < 0 ? v + size : v;
    };
    a = part(range.substr(0, colon), 0);
    b = part(range.substr(colon + 1), size);
    if (a < 0 || b > size || a >= b)
      throw ClaimError("layers '" + range + "' selects no layer of the " + std::to_string(size) +
                       " entries (A:B: A < B, B exclusive, negatives from the end)");
  }
  std::vector<int> out;
  for (int i = a; i < b; ++i) out.push_back(i);
  return out;
}

Measurement collect(const ClaimSpec& c, const sim::GridRecords& records, bool with_theory) {
  Measurement m;
  m.records = records;
  const auto& configs = c.grid.configs;
  std::vector<std::vector<double>> mf(configs.size());
  if (with_theory)
    for (std::size_t i = 0; i < configs.size(); ++i) {
      try {
        mf[i] = mf_series(theory::meanfield(meanfield_of::to_stack_spec(configs[i])), c.metric);
      } catch (const std::exception& e) {
        m.theory_notes.push_back("config " + std::to_string(i) + ": no mean field (" + e.what() + ")");
      }
    }
  const std::size_t samples = records.empty() ? 0 : records.front().size();
  m.y.assign(samples, {});
  m.den.assign(samples, {});

  if (per_layer(c)) {
    const auto& recs = records.at(0);
    if (recs.empty()) return m;
    const int span = layer_span(configs.at(0));
    const auto first = series(recs.front(), c.metric, span);
    for (int i : layer_range(static_cast<int>(first.size()), c.layers)) {
      if (!std::isfinite(first[i]) && !(i < static_cast<int>(mf[0].size()) && std::isfinite(mf[0][i])))
        continue;
      m.x.push_back(i);
      m.meanfield.push_back(i < static_cast<int>(mf[0].size()) ? finite(mf[0][i]) : std::nullopt);
    }
    for (std::size_t s = 0; s < samples; ++s) {
      const auto v = series(recs[s], c.metric, span);
      for (double x : m.x) m.y[s].push_back(v[static_cast<std::size_t>(x)]);
    }
    return m;
  }

  for (std::size_t i = 0; i < configs.size(); ++i) {
    m.x.push_back(x_of(c, configs[i], i));
    const bool ratio = c.fit == FitKind::ratio;
    m.meanfield.push_back(mf[i].empty() ? std::nullopt : finite(reduce(c, mf[i], c.layer)));
    m.meanfield_den.push_back(ratio && !mf[i].empty() ? finite(pick(mf[i], c.denominator)) : std::nullopt);
    for (std::size_t s = 0; s < samples; ++s) {
      const auto v = series(records[i].at(s), c.metric, layer_span(configs[i]));
      m.y[s].push_back(reduce(c, v, c.layer));
      m.den[s].push_back(ratio ? pick(v, c.denominator) : kNaN);
    }
  }
  return m;
}

// Subtracts the reference's statistic from point i of every sample (and of the mean field).
void subtract_reference_at(const ClaimSpec& c, std::size_t i, const sim::Config& config,
                           const std::vector<sim::SampleRecord>& reference, Measurement& m) {
  for (std::size_t s = 0; s < m.y.size() && s < reference.size(); ++s)
    if (i < m.y[s].size())
      m.y[s][i] -= reduce(c, series(reference[s], c.metric, layer_span(config)), c.layer);
  if (i >= m.meanfield.size() || !m.meanfield[i]) return;
  try {
    const double r =
        reduce(c, mf_series(theory::meanfield(meanfield_of::to_stack_spec(config)), c.metric), c.layer);
    m.meanfield[i] = std::isfinite(r) ? std::optional(*m.meanfield[i] - r) : std::nullopt;
  } catch (const std::exception& e) {
    m.meanfield[i].reset();
    m.theory_notes.push_back(std::string("reference: no mean field (") + e.what() + ")");
  }
}

void subtract_reference(const ClaimSpec& c, const std::vector<sim::SampleRecord>& reference, Measurement& m) {
  if (!c.reference) return;
  const std::size_t points = m.y.empty() ? m.meanfield.size() : m.y.front().size();
  for (std::size_t i = 0; i < points; ++i) subtract_reference_at(c, i, *c.reference, reference, m);
}

namespace {
// A claim on a PyTorch block: every config (and the references, last) measured by normsim.torch at once.
Measurement measure_torch_block(const ClaimSpec& c) {
  std::vector<sim::Config> configs = c.grid.configs;
  const std::size_t n = configs.size();
  if (!c.reference_per_x.empty())
    configs.insert(configs.end(), c.reference_per_x.begin(), c.reference_per_x.end());
  else if (c.reference)
    configs.push_back(*c.reference);
  TorchBlockRun run = run_torch_block(c.torch_file, configs, c.id, c.torch_timeout);
  sim::GridRecords& records = run.records;
  const sim::GridRecords references(records.begin() + std::ptrdiff_t(n), records.end());
  records.resize(n);
  Measurement m = collect(c, records);
  m.config_seconds.assign(run.seconds.begin(), run.seconds.begin() + std::ptrdiff_t(n));
  m.backend = "torch";
  m.device = "normsim.torch (PyTorch, CPU) run by " + torch_block_python();
  if (!c.reference_per_x.empty()) {
    for (std::size_t i = 0; i < references.size(); ++i)
      subtract_reference_at(c, i, c.reference_per_x[i], references[i], m);
  } else if (c.reference) {
    subtract_reference(c, references.front(), m);
  }
  return m;
}
}  // namespace

// The records of one step, one per sample in sample order (a run with steps returns steps 0 .. T of each
// sample, sim/backend.hpp); a run without steps is all step 0.
std::vector<sim::SampleRecord> at_step(std::vector<sim::SampleRecord> records, int step) {
  std::erase_if(records, [step](const sim::SampleRecord& r) { return r.step != step; });
  return records;
}

Measurement measure(const ClaimSpec& c, sim::Backend& backend) {
  if (!c.torch_file.empty()) return measure_torch_block(c);
  const auto run = [&](const sim::Config& config) {
    std::vector<int> samples(static_cast<std::size_t>(config.samples));
    std::iota(samples.begin(), samples.end(), 0);
    return at_step(backend.run(config, samples), c.step);
  };
  sim::GridRecords records;
  std::vector<double> seconds;
  for (const auto& config : c.grid.configs) {
    const auto started = std::chrono::steady_clock::now();
    records.push_back(run(config));
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  // The mean field is the network at init: it predicts step 0 only.
  Measurement m = collect(c, records, c.step == 0);
  m.config_seconds = std::move(seconds);
  m.backend = backend.name();
  m.device = backend.device();
  if (!c.reference_per_x.empty()) {
    for (std::size_t i = 0; i < c.reference_per_x.size(); ++i)
      subtract_reference_at(c, i, c.reference_per_x[i], run(c.reference_per_x[i]), m);
  } else if (c.reference) {
    subtract_reference(c, run(*c.reference), m);
  }
  return m;
}

}  // namespace normsim::check
