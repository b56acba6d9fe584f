// Reading claim files with toml++ (see claim.hpp). Errors name the file, the line and the key, like config
// files do; the [sweep] table is handed to sim's own config parser so that it reads exactly as a config file.
#include "check/claim.hpp"

#include "check/measure.hpp"
#include "sim/metrics.hpp"
#include "sim/run/config_schema.hpp"
#include "sim/run/key_relevance.hpp"
#include "vocab/closest_name.hpp"

#include <toml++/toml.h>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

namespace normsim::check {

namespace fs = std::filesystem;

namespace {

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  std::string where(const toml::node& node) const {
    return file_ + ":" + std::to_string(node.source().begin.line);
  }
  std::string where(const toml::key& key) const {
    return file_ + ":" + std::to_string(key.source().begin.line);
  }
  [[noreturn]] void fail(const std::string& at, const std::string& key, const std::string& why) const {
    throw ClaimError(at + ": key '" + key + "': " + why);
  }

  // Rejects keys of `table` not in `allowed`: a typo must not silently fall back to a default.
  void only(const toml::table& table, const std::string& prefix,
            std::initializer_list<std::string_view> allowed) const {
    for (const auto& [k, node] : table) {
      const std::string name(k.str());
      if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
        std::string list;
        for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
        fail(where(k), prefix + name, "unknown key (allowed here: " + list + ")");
      }
    }
  }

  std::optional<std::string> string(const toml::table& t, const std::string& prefix, const char* key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_string()) fail(where(*n), prefix + key, "expected a string");
    return n->as_string()->get();
  }
  std::string required_string(const toml::table& t, const std::string& prefix, const char* key,
                              const toml::node& owner) const {
    auto s = string(t, prefix, key);
    if (!s || s->empty()) fail(where(owner), prefix + key, "missing (a non-empty string is required)");
    return *s;
  }
  std::optional<double> number(const toml::table& t, const std::string& prefix, const char* key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (auto i = n->as_integer()) return static_cast<double>(i->get());
    if (auto f = n->as_floating_point()) return f->get();
    fail(where(*n), prefix + key, "expected a number");
  }
  std::optional<bool> boolean(const toml::table& t, const std::string& prefix, const char* key) const {
    const toml::node* n = t.get(key);
    if (!n) return std::nullopt;
    if (!n->is_boolean()) fail(where(*n), prefix + key, "expected true or false");
    return n->as_boolean()->get();
  }
  const toml::table& table(const toml::table& root, const char* key, bool required) const {
    static const toml::table empty;
    const toml::node* n = root.get(key);
    if (!n) {
      if (required) throw ClaimError(file_ + ":1: key '" + key + "': missing table [" + key + "]");
      return empty;
    }
    if (!n->is_table()) fail(where(*n), key, "expected a table [" + std::string(key) + "]");
    return *n->as_table();
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// The [sweep] table with the keys of each table of `overrides` replacing its own (later ones win; [full],
// [reference]) and `drop` left out, as config-file text that keeps every key on its own line number, so
// sim's parser reports the claim file's real lines.
std::string sweep_as_config(const toml::table& sweep, std::initializer_list<const toml::table*> overrides,
                            const std::string& drop = "") {
  std::map<std::string, std::pair<long, std::string>> keys;
  const auto put_all = [&](const toml::table& table) {
    for (const auto& [k, node] : table) {
      std::ostringstream value;
      node.visit([&](const auto& concrete) { value << concrete; });
      keys[std::string(k.str())] = {k.source().begin.line, std::string(k.str()) + " = " + value.str()};
    }
  };
  put_all(sweep);
  for (const toml::table* t : overrides)
    if (t) put_all(*t);
  keys.erase(drop);
  std::map<long, std::string> lines;
  for (const auto& [name, at] : keys) lines[at.first] = at.second;
  std::string text;
  long line = 1;
  for (const auto& [n, content] : lines) {
    for (; line < n; ++line) text += '\n';
    text += content + '\n';
    ++line;
  }
  return text;
}

// [reference]: the sweep without its x axis, with these keys replaced: one config whose statistic every
// point is compared with, sample by sample. Only a bound or linear claim over a swept key reads it. It may
// give the swept key one value ("Pre-LN and Post-LN, each against Mix-LN"): then it is that one config at
// every point.
void read_reference(const Reader& r, const toml::table& root, const toml::table& sweep,
                    const toml::table* full, ClaimSpec& c) {
  const toml::node* node = root.get("reference");
  if (!node) return;
  const toml::table& ref = r.table(root, "reference", false);
  if (c.x_key == "layer" || (c.fit != FitKind::bound && c.fit != FitKind::linear))
    r.fail(r.where(*node), "reference", "only a bound or linear claim over a swept key compares with one");
  const bool fixes_x = ref.contains(c.x_key);
  if (fixes_x && ref.get(c.x_key)->is_array())
    r.fail(r.where(*ref.get(c.x_key)), "reference." + c.x_key, "the reference is one config: one value");
  sim::Grid g;
  try {
    g = sim::parse_grid(sweep_as_config(sweep, {full, &ref}, fixes_x ? "" : c.x_key), r.file());
  } catch (const sim::ConfigError& e) {
    throw ClaimError(e.what());
  }
  c.reference = g.configs.front();
  // A reference that reads the swept key is compared at each point's own x (LNS minus Pre-LN at the same
  // depth); one that does not (Pre-LN against SpanNorm's lambda) is one config, as above.
  if (!fixes_x && sim::why_key_unused(c.x_key, *c.reference).empty()) {
    try {
      c.reference_per_x = sim::parse_grid(sweep_as_config(sweep, {full, &ref}), r.file()).configs;
    } catch (const sim::ConfigError& e) {
      throw ClaimError(e.what());
    }
  }
  if (c.reference->samples != c.grid.configs.front().samples)
    r.fail(r.where(*node), "reference.samples",
           "pairs samples with the sweep, so it must not change samples");
}

FitKind parse_fit(const Reader& r, const toml::table& fit, const std::string& text) {
  static const std::map<std::string, FitKind, std::less<>> kinds = {
      {"linear", FitKind::linear}, {"powerlaw", FitKind::powerlaw}, {"ratio", FitKind::ratio},
      {"bound", FitKind::bound},   {"profile", FitKind::profile},   {"convergence", FitKind::convergence}};
  const auto it = kinds.find(text);
  if (it == kinds.end())
    r.fail(r.where(*fit.get("kind")), "fit.kind",
           "unknown fit kind '" + text + "' (linear, powerlaw, ratio, bound, profile, convergence)");
  return it->second;
}

// [measure] layer / denominator: a layer expression ("last", "-2") or an integer (3).
std::optional<std::string> layer_text(const Reader& r, const toml::table& measure, const char* key) {
  if (const toml::node* n = measure.get(key); n && n->is_integer())
    return std::to_string(n->as_integer()->get());
  return r.string(measure, "measure.", key);
}

// One band, given one way: tolerance and rel_tolerance together would leave one of them unread (the band is
// the larger), and a tolerance beside lower/upper would be half replaced; both are refused.
void check_band_keys(const Reader& r, const toml::table& pred) {
  const toml::node* tol = pred.get("tolerance");
  const toml::node* rel = pred.get("rel_tolerance");
  if (tol && rel)
    r.fail(r.where(*rel), "prediction.rel_tolerance", "give tolerance or rel_tolerance, not both");
  if (const toml::node* t = tol ? tol : rel; t && (pred.contains("lower") || pred.contains("upper")))
    r.fail(r.where(*t), tol ? "prediction.tolerance" : "prediction.rel_tolerance",
           "give a tolerance around value, or lower/upper, not both");
}

// [full]'s keys are checked whether or not --full reads them, so a typo there is found on the first run.
void check_full(const toml::table& sweep, const toml::table& full, const std::string& file) {
  try {
    sim::parse_grid(sweep_as_config(sweep, {&full}), file);
  } catch (const sim::ConfigError& e) {
    throw ClaimError(e.what());
  }
}

// [fit] decide_at: the one x of a ratio claim's sweep that the source's statement names.
void read_decide_at(const Reader& r, const toml::table& fit, ClaimSpec& c) {
  const toml::node* node = fit.get("decide_at");
  if (!node) return;
  c.decide_at = r.number(fit, "fit.", "decide_at");
  if (c.fit != FitKind::ratio || c.x_key == "layer")
    r.fail(r.where(*node), "fit.decide_at", "only a ratio claim over a swept key reads it");
  bool found = false;
  for (std::size_t i = 0; i < c.grid.configs.size(); ++i)
    found |= x_of(c, c.grid.configs[i], i) == *c.decide_at;
  if (!found) r.fail(r.where(*node), "fit.decide_at", "is not one of the swept values of " + c.x_key);
}

// The entries of the claim's metric in its shallowest configuration (stream metrics K+1, sublayer
// metrics K), after checking that every factor names a metric and they share one index.
int metric_entries(const Reader& r, const toml::node& at, const ClaimSpec& c) {
  std::optional<sim::MetricIndex> index;
  for (const auto& factor : factors(c.metric)) {
    const std::string name = factor == kLayerGradient ? "gradw_w2" : factor;  // a sublayer metric too
    const int id = sim::metric_id(name);
    if (id < 0) r.fail(r.where(at), "measure.metric", "unknown metric '" + name + "' (normsim list metrics)");
    const auto kind = sim::metric_table()[std::size_t(id)].index;
    if (index && *index != kind)
      r.fail(r.where(at), "measure.metric",
             "a product or quotient of stream and sublayer metrics has no common index");
    index = kind;
  }
  int depth = std::numeric_limits<int>::max();
  for (const auto& cfg : c.grid.configs) depth = std::min(depth, cfg.depth);
  return *index == sim::MetricIndex::stream ? depth + 1 : depth;
}

// The measure's names and layers against the shallowest configuration of the sweep: an unknown metric, a
// layer past the stack or a range that selects nothing is an error at its line, not NaN at run time.
void check_measure(const Reader& r, const toml::table& measure, const ClaimSpec& c) {
  const int n = metric_entries(r, *measure.get("metric"), c);
  for (const char* key : {"layer", "denominator"})
    if (const toml::node* node = measure.get(key))
      if (const std::string why = layer_expr_problem(key[0] == 'l' ? c.layer : c.denominator, n);
          !why.empty())
        r.fail(r.where(*node), std::string("measure.") + key, why);
  if (const toml::node* node = measure.get("layers")) {
    try {
      if (c.layers != "all") layer_range(n, c.layers);
    } catch (const ClaimError& e) {
      r.fail(r.where(*node), "measure.layers", e.what());
    }
  }
  if (measure.get("denominator") && c.fit != FitKind::ratio)
    r.fail(r.where(*measure.get("denominator")), "measure.denominator", "only a ratio fit reads it");
}

// [measure] step = s with sweep.steps = T: a claim at a training step reads, per sample, the record of step s
// (0 <= s <= T in every config), so the fit and verdict see one record per sample as at init. A claim with
// steps names its step (no default: step 0 and step T are different claims); a PyTorch block does not train.
void read_step(const Reader& r, const toml::table& root, const toml::table& sweep, const toml::table& measure,
               ClaimSpec& c) {
  const auto& configs = c.grid.configs;
  const int fewest = std::min_element(configs.begin(), configs.end(), [](const auto& a, const auto& b) {
                       return a.steps < b.steps;
                     })->steps;
  const bool trains = std::any_of(configs.begin(), configs.end(), [](const auto& g) { return g.steps > 0; });
  const toml::node* step = measure.get("step");
  const std::string steps_at = r.where(sweep.contains("steps") ? *sweep.get("steps") : *root.get("sweep"));
  if (trains && !c.torch_file.empty())
    r.fail(steps_at, "sweep.steps", "a [torch] block is measured at init only");
  if (!step) {
    if (trains)
      r.fail(steps_at, "measure.step",
             "a claim with sweep.steps names the step its records are read at ([measure] step = 0 .. steps)");
    return;
  }
  if (!step->is_integer() || step->as_integer()->get() < 0 || step->as_integer()->get() > fewest)
    r.fail(r.where(*step), "measure.step",
           "expected an integer in [0, " + std::to_string(fewest) + "] (sweep.steps of every config)");
  c.step = static_cast<int>(step->as_integer()->get());
}

// [torch] file = "blocks/x.py": the Python block file, relative to the claim file, which must exist.
void read_torch(const Reader& r, const toml::table& root, const fs::path& claim_file, ClaimSpec& c) {
  if (!root.contains("torch")) return;
  const toml::table& torch = r.table(root, "torch", false);
  r.only(torch, "torch.", {"file", "timeout"});
  const std::string given = r.required_string(torch, "torch.", "file", *root.get("torch"));
  const fs::path file = claim_file.parent_path() / given;
  if (!fs::is_regular_file(file))
    r.fail(r.where(*torch.get("file")), "torch.file", "no such Python file: " + file.string());
  c.torch_file = file.string();
  c.torch_timeout = r.number(torch, "torch.", "timeout").value_or(c.torch_timeout);
  if (!(c.torch_timeout > 0 && c.torch_timeout <= 86400))
    r.fail(r.where(*torch.get("timeout")), "torch.timeout", "expected seconds in (0, 86400]");
}

// The claim's metric (each factor) is computed whatever [sweep]'s `metrics` key says.
void compute_claim_metric(ClaimSpec& c) {
  std::vector<int> ids;
  for (const auto& name : factors(c.metric)) {
    if (name != kLayerGradient) ids.push_back(sim::metric_id(name));
    if (name == kLayerGradient)
      for (const int id : gradient_metrics()) ids.push_back(id);
  }
  for (const int id : ids) {
    for (auto& config : c.grid.configs) config.metrics.insert(id);
    if (c.reference) c.reference->metrics.insert(id);
    for (auto& config : c.reference_per_x) config.metrics.insert(id);
  }
}

// Every number of [prediction] finite, and a one-sided band the right way round.
void check_prediction(const Reader& r, const toml::table& pred, const ClaimSpec& c) {
  for (const auto& [k, node] : pred)
    if (const auto* f = node.as_floating_point(); f && !std::isfinite(f->get()))
      r.fail(r.where(k), "prediction." + std::string(k.str()), "must be a finite number");
  if (c.has_lower && c.has_upper && c.lower >= c.upper)
    r.fail(r.where(*pred.get("lower")), "prediction.lower",
           "must be below prediction.upper (a band of zero width can never support a claim)");
  if ((c.predicted || c.meanfield) && !c.has_lower && !c.has_upper && c.tolerance == 0 &&
      c.rel_tolerance == 0)
    r.fail(r.where(pred), "prediction.tolerance",
           "missing: value alone is a band of zero width, which can never support a claim (give tolerance, "
           "rel_tolerance, lower or upper)");
}

// What the claim is and how it may be judged: its kind (whose statement), the testable-at-init decision every
// file must make (docs/claims.md's rule), whether it is judged at all, and the looks behind its sample count.
void read_header(const Reader& r, const toml::table& root, ClaimSpec& c) {
  const toml::node& top = root;
  c.note = r.string(root, "", "note").value_or("");
  c.quote = r.required_string(root, "", "quote", top);
  c.band_source = r.required_string(root, "", "band_source", top);
  const auto testable = r.boolean(root, "", "testable_at_init");
  if (!testable)
    r.fail(r.where(top), "testable_at_init",
           "missing (every claim decides it by the rule of docs/claims.md, \"Testable at initialization\")");
  c.testable_at_init = *testable;
  c.judged = r.boolean(root, "", "judged").value_or(true);
  const std::string kind = r.required_string(root, "", "kind", top);
  if (kind != "literature" && kind != "reading" && kind != "self")
    r.fail(r.where(*root.get("kind")), "kind", "expected \"literature\", \"reading\" or \"self\"");
  c.kind = kind == "self" ? ClaimKind::self : kind == "reading" ? ClaimKind::reading : ClaimKind::literature;
  if (c.kind == ClaimKind::reading)
    c.reading_of = r.required_string(root, "", "reading_of", top);
  else if (root.contains("reading_of"))
    r.fail(r.where(*root.get("reading_of")), "reading_of", "only a claim of kind \"reading\" reads it");
}

// looks = [n1, n2, ...]: the sample counts at which the verdict was read before, ending with today's; each
// look widens every interval (Bonferroni over looks).
void read_looks(const Reader& r, const toml::table& root, bool full, bool full_samples, ClaimSpec& c) {
  // A --full run at another sample count is one more look at the same claim.
  const auto set_confidence = [&] {
    const std::size_t m = std::max<std::size_t>(c.looks.size(), 1) + (full && full_samples ? 1 : 0);
    c.confidence = 1.0 - 0.05 / static_cast<double>(m);
  };
  const toml::node* node = root.get("looks");
  if (!node) return set_confidence();
  const toml::array* a = node->as_array();
  if (!a || a->empty()) r.fail(r.where(*node), "looks", "expected a non-empty list of sample counts");
  for (const auto& v : *a) {
    const auto* i = v.as_integer();
    if (!i || i->get() < 2 || (!c.looks.empty() && i->get() <= c.looks.back()))
      r.fail(r.where(*node), "looks", "expected increasing sample counts >= 2");
    c.looks.push_back(static_cast<int>(i->get()));
  }
  if (!full && c.looks.back() != c.grid.configs.front().samples)
    r.fail(
        r.where(*node), "looks",
        "the last look must be the sweep's samples (" + std::to_string(c.grid.configs.front().samples) + ")");
  set_confidence();
}

}  // namespace

std::string_view to_string(FitKind k) {
  switch (k) {
    case FitKind::linear:
      return "linear";
    case FitKind::powerlaw:
      return "powerlaw";
    case FitKind::ratio:
      return "ratio";
    case FitKind::bound:
      return "bound";
    case FitKind::profile:
      return "profile";
    case FitKind::convergence:
      return "convergence";
  }
  return "?";
}

std::string_view to_string(ClaimKind k) {
  return k == ClaimKind::self ? "self" : k == ClaimKind::reading ? "reading" : "literature";
}

ClaimSpec load_claim(const fs::path& path, bool full) {
  const std::string file = path.string();
  std::ifstream in(path);
  if (!in) throw ClaimError(file + ":1: cannot read the claim file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  toml::table root;
  try {
    root = toml::parse(std::string_view(text), file);
  } catch (const toml::parse_error& e) {
    throw ClaimError(file + ":" + std::to_string(e.source().begin.line) +
                     ": TOML syntax error: " + std::string(e.description()));
  }
  const Reader r(file);
  r.only(root, "",
         {"id", "kind", "reading_of", "statement", "source", "quote", "band_source", "testable_at_init",
          "judged", "looks", "note", "sweep", "full", "reference", "measure", "fit", "prediction", "figure",
          "torch"});
  ClaimSpec c;
  c.file = file;
  const toml::node& top = root;
  c.id = r.required_string(root, "", "id", top);
  if (!std::all_of(c.id.begin(), c.id.end(),
                   [](unsigned char ch) { return std::isalnum(ch) || ch == '_' || ch == '-'; }))
    r.fail(r.where(*root.get("id")), "id",
           "'" + c.id + "' may only use letters, digits, '_' and '-' (it names a folder)");
  c.statement = r.required_string(root, "", "statement", top);
  c.source = r.required_string(root, "", "source", top);
  read_header(r, root, c);

  // [sweep]: a config; at most one key given as a list is the x axis.
  const toml::table& sweep = r.table(root, "sweep", true);
  const toml::table* full_table = full && root.contains("full") ? &r.table(root, "full", false) : nullptr;
  if (!full && root.contains("full")) check_full(sweep, r.table(root, "full", false), file);
  try {
    c.grid = sim::parse_grid(sweep_as_config(sweep, {full_table}), file);
  } catch (const sim::ConfigError& e) {
    throw ClaimError(e.what());
  }
  c.grid.name = c.id;
  c.grid.description = c.statement;
  if (c.grid.swept_keys.size() > 1)
    r.fail(r.where(*root.get("sweep")), "sweep",
           "at most one key may be a list (the x axis); got " + std::to_string(c.grid.swept_keys.size()));
  c.x_key = c.grid.swept_keys.empty() ? "layer" : c.grid.swept_keys.front();
  read_looks(r, root, full, full_table && full_table->contains("samples"), c);

  const toml::table& measure = r.table(root, "measure", true);
  r.only(measure, "measure.", {"metric", "layers", "layer", "reduce", "denominator", "step"});
  c.metric = r.required_string(measure, "measure.", "metric", *root.get("measure"));
  c.layers = r.string(measure, "measure.", "layers").value_or("all");
  c.layer = layer_text(r, measure, "layer").value_or("last");
  c.reduce = r.string(measure, "measure.", "reduce").value_or("value");
  if (c.reduce != "value" && c.reduce != "slope" && c.reduce != "logslope" && c.reduce != "logrange")
    r.fail(r.where(*measure.get("reduce")), "measure.reduce",
           "expected \"value\", \"slope\", \"logslope\" or \"logrange\"");
  c.denominator = layer_text(r, measure, "denominator").value_or("");

  const toml::table& fit = r.table(root, "fit", true);
  r.only(fit, "fit.", {"kind", "log_x", "log_y", "decide_at"});
  c.fit = parse_fit(r, fit, r.required_string(fit, "fit.", "kind", *root.get("fit")));
  read_decide_at(r, fit, c);
  c.log_x =
      r.boolean(fit, "fit.", "log_x").value_or(c.fit == FitKind::powerlaw || c.fit == FitKind::convergence);
  c.log_y = r.boolean(fit, "fit.", "log_y").value_or(c.fit == FitKind::powerlaw);
  if (c.fit == FitKind::ratio && c.denominator.empty())
    r.fail(r.where(*root.get("measure")), "measure.denominator",
           "a ratio claim needs the denominator's layer");
  if ((c.fit == FitKind::linear || c.fit == FitKind::powerlaw) && c.x_key != "layer" &&
      c.grid.configs.size() < 2)
    r.fail(r.where(*root.get("sweep")), "sweep",
           "a fit against a key needs that key as a list of >= 2 values");

  check_measure(r, measure, c);
  read_reference(r, root, sweep, full_table, c);
  compute_claim_metric(c);
  read_torch(r, root, path, c);
  read_step(r, root, sweep, measure, c);

  const toml::table& pred = r.table(root, "prediction", true);
  r.only(pred, "prediction.", {"value", "tolerance", "rel_tolerance", "lower", "upper"});
  if (const toml::node* v = pred.get("value"); v && v->is_string()) {
    if (v->as_string()->get() != "meanfield")
      r.fail(r.where(*v), "prediction.value", "expected a number or \"meanfield\"");
    c.meanfield = true;
  } else {
    c.predicted = r.number(pred, "prediction.", "value");
  }
  c.tolerance = r.number(pred, "prediction.", "tolerance").value_or(0);
  c.rel_tolerance = r.number(pred, "prediction.", "rel_tolerance").value_or(0);
  if (auto lo = r.number(pred, "prediction.", "lower")) c.lower = *lo, c.has_lower = true;
  if (auto hi = r.number(pred, "prediction.", "upper")) c.upper = *hi, c.has_upper = true;
  check_prediction(r, pred, c);
  if (c.tolerance < 0 || c.rel_tolerance < 0)
    r.fail(r.where(*root.get("prediction")), "prediction.tolerance", "tolerances must be >= 0");
  check_band_keys(r, pred);
  if (!c.meanfield && !c.predicted && !(c.has_lower || c.has_upper))
    r.fail(r.where(*root.get("prediction")), "prediction.value",
           "missing (a number, \"meanfield\", or lower/upper)");
  if (c.fit == FitKind::profile && !c.meanfield)
    r.fail(r.where(*root.get("prediction")), "prediction.value",
           "a profile claim compares with \"meanfield\"");

  const toml::table& figure = r.table(root, "figure", false);
  r.only(figure, "figure.", {"kind", "x_label", "y_label", "log_x", "log_y"});
  c.figure_kind = r.string(figure, "figure.", "kind").value_or(c.x_key == "layer" ? "profile" : "scaling");
  if (c.figure_kind != "profile" && c.figure_kind != "points" && c.figure_kind != "scaling" &&
      c.figure_kind != "line")
    r.fail(r.where(*figure.get("kind")), "figure.kind",
           "unknown figure kind '" + c.figure_kind + "' (profile, points, scaling, line)");
  c.x_label = r.string(figure, "figure.", "x_label").value_or(c.x_key);
  c.y_label = r.string(figure, "figure.", "y_label").value_or(c.metric);
  c.figure_log_x = r.boolean(figure, "figure.", "log_x").value_or(c.log_x);
  c.figure_log_y = r.boolean(figure, "figure.", "log_y").value_or(c.log_y);
  return c;
}

std::vector<ClaimSpec> load_claims(const fs::path& dir, const std::vector<std::string>& ids, bool full) {
  if (!fs::is_directory(dir)) throw ClaimError(dir.string() + ":1: not a folder of claim files");
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".toml") files.push_back(e.path());
  if (files.empty()) throw ClaimError(dir.string() + ": no claim files (*.toml) in the folder");
  std::sort(files.begin(), files.end());
  std::vector<ClaimSpec> all;
  std::set<std::string> seen;
  for (const auto& f : files) {
    all.push_back(load_claim(f, full));
    if (!seen.insert(all.back().id).second)
      throw ClaimError(f.string() + ":1: key 'id': '" + all.back().id + "' is used by another claim file");
  }
  if (ids.empty()) return all;
  std::vector<ClaimSpec> picked;
  for (const auto& id : ids) {
    const auto it = std::find_if(all.begin(), all.end(), [&](const ClaimSpec& c) { return c.id == id; });
    if (it == all.end()) {
      std::vector<std::string> known;
      for (const auto& c : all) known.push_back(c.id);
      const std::string hint = vocab::closest_name(id, known);
      throw ClaimError(dir.string() + ": no claim with id '" + id + "'" +
                       (hint.empty() ? "" : "; did you mean '" + hint + "'?") + " (normsim check --list)");
    }
    picked.push_back(*it);
  }
  return picked;
}

}  // namespace normsim::check
