// Reading config files with toml++: keys in file order, lists expanded into a grid, --set overrides, and
// errors that name the file, line and key.
#include "sim/run/config_file.hpp"

#include <toml++/toml.h>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <utility>

#include "sim/run/config_schema.hpp"
#include "sim/run/key_relevance.hpp"

namespace normsim::sim {

namespace {

constexpr std::array<RunKey, 2> kRunKeys{{
    {"name", "a short name for the run (default: the config file's name); written to run.json"},
    {"description", "what the run is for; written to run.json"},
}};

// One key of the file (or of --set): its values (one unless given as a list) and where each came from.
struct Entry {
  std::string key;
  bool list = false;
  std::vector<KeyValue> values;
  std::vector<std::string> where;  // per value: "FILE:LINE" or "--set K=V"
  bool variant = false;            // one of `variants`' keys: swept together with the others (one dimension)
};

std::string at(const std::string& source, const toml::source_region& region) {
  return source + ":" + std::to_string(region.begin.line);
}

// A scalar TOML node as a KeyValue; nullopt (and `why`) for dates, times, arrays and tables.
std::optional<KeyValue> scalar(const toml::node& node, std::string& why) {
  if (auto v = node.as_boolean()) return KeyValue(v->get());
  if (auto v = node.as_integer()) return KeyValue(static_cast<std::int64_t>(v->get()));
  if (auto v = node.as_floating_point()) return KeyValue(v->get());
  if (auto v = node.as_string()) return KeyValue(v->get());
  if (node.is_array())
    why = "nested lists are not allowed (a list sweeps a key over scalar values)";
  else if (node.is_table())
    why = "a table is not a value";
  else
    why = "dates and times are not values of any key";
  return std::nullopt;
}

// The value converted to the key's type and checked on its own; throws ConfigError at `where`.
KeyValue checked(const KeyInfo& key, const KeyValue& raw, const std::string& where) {
  const auto v = coerce(key, raw);
  if (!v)
    throw ConfigError(where + ": key '" + std::string(key.name) + "': expected " +
                      std::string(type_name(key.type)) + ", got " + std::string(type_name(raw)) + " " +
                      format_toml(raw));
  if (const std::string why = key.check(*v); !why.empty())
    throw ConfigError(where + ": key '" + std::string(key.name) + "': " + why);
  return *v;
}

const KeyInfo& known_key(const std::string& name, const std::string& where) {
  if (const KeyInfo* k = find_key(name)) return *k;
  std::string msg = where + ": unknown key '" + name + "'";
  if (const std::string hint = suggest_key(name); !hint.empty()) msg += "; did you mean '" + hint + "'?";
  throw ConfigError(msg + " (`normsim list keys` lists every key)");
}

// The items of a list given for a name_list key, as its one value (such a list never sweeps); each item
// is checked at its own line. `item_where` gives an item's place in messages.
KeyValue name_list(const KeyInfo& key, const std::vector<KeyValue>& items,
                   const std::function<std::string(std::size_t)>& item_where) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < items.size(); ++i) {
    const auto* s = std::get_if<std::string>(&items[i]);
    if (!s)
      throw ConfigError(item_where(i) + ": key '" + std::string(key.name) +
                        "': expected a name (string), got " + std::string(type_name(items[i])) + " " +
                        format_toml(items[i]));
    checked(key, KeyValue(std::vector<std::string>{*s}), item_where(i));
    names.push_back(*s);
  }
  return KeyValue(std::move(names));
}

Entry entry_from_node(const std::string& name, const toml::node& node, const std::string& source) {
  const std::string where = at(source, node.source());
  const KeyInfo& key = known_key(name, where);
  std::string why;
  if (const auto* array = node.as_array(); array && key.type == KeyType::name_list) {
    std::vector<KeyValue> items;
    for (const auto& item : *array) {
      const auto raw = scalar(item, why);
      if (item.is_array()) why = "takes one list of names, not a list of lists (it does not sweep)";
      if (!raw) throw ConfigError(at(source, item.source()) + ": key '" + name + "': " + why);
      items.push_back(*raw);
    }
    const auto item_where = [&](std::size_t i) { return at(source, (*array)[i].source()); };
    return Entry{name, false, {checked(key, name_list(key, items, item_where), where)}, {where}};
  }
  Entry e{name, node.is_array(), {}, {}};
  if (const auto* array = node.as_array()) {
    if (array->empty()) throw ConfigError(where + ": key '" + name + "': an empty list sweeps over nothing");
    for (const auto& item : *array) {
      const std::string item_where = at(source, item.source());
      const auto raw = scalar(item, why);
      if (!raw) throw ConfigError(item_where + ": key '" + name + "': " + why);
      e.values.push_back(checked(key, *raw, item_where));
      e.where.push_back(item_where);
    }
  } else {
    const auto raw = scalar(node, why);
    if (!raw) throw ConfigError(where + ": key '" + name + "': " + why);
    e.values.push_back(checked(key, *raw, where));
    e.where.push_back(where);
  }
  return e;
}

// The keys of one table of `variants`, in file order, each value checked at its line; `label` is kept as
// the variant's name.
std::vector<std::pair<std::string, KeyValue>> variant_keys(const toml::table& table, const std::string& where,
                                                           const std::string& source) {
  std::vector<std::pair<const toml::key*, const toml::node*>> items;
  for (const auto& [k, node] : table) items.emplace_back(&k, &node);
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    return std::pair(a.first->source().begin.line, a.first->source().begin.column) <
           std::pair(b.first->source().begin.line, b.first->source().begin.column);
  });
  std::vector<std::pair<std::string, KeyValue>> keys;
  for (const auto& [k, node] : items) {
    const std::string name(k->str()), item_where = at(source, node->source());
    const KeyInfo& key = known_key(name, item_where);
    std::string why;
    const auto raw = scalar(*node, why);
    if (node->is_array()) why = "a variant sets one value per key (sweep it at the top level instead)";
    if (!raw || key.type == KeyType::name_list)
      throw ConfigError(item_where + ": key 'variants': " + name + ": " +
                        (raw ? "is the same for every variant; set it at the top level" : why));
    keys.emplace_back(name, checked(key, *raw, item_where));
  }
  if (keys.empty()) throw ConfigError(where + ": key 'variants': an empty variant sets no key");
  return keys;
}

// A variant as the file writes it; a variant without a label is named by its keys ("norm=dyt,
// norm_alpha=0.8").
GridVariant grid_variant(const std::vector<std::pair<std::string, KeyValue>>& keys) {
  GridVariant v;
  std::string named;
  for (const auto& [name, value] : keys) {
    const auto* text = std::get_if<std::string>(&value);
    if (name == "label") {
      v.label = text ? *text : format_toml(value);
      continue;
    }
    v.keys.emplace_back(name, text ? *text : format_toml(value));
    named += (named.empty() ? "" : ", ") + name + "=" + v.keys.back().second;
  }
  if (v.label.empty()) v.label = named;
  return v;
}

// `variants = [{label = "DyT", norm = "dyt"}, ...]`: one swept dimension whose points each set several keys
// (experiments/README.md, "Variants"). Every key a variant names becomes an entry over all variants, `label`
// first (a variant without one is named by its keys); a variant that leaves a key out takes its default.
std::vector<Entry> variant_entries(const toml::node& node, const std::string& source,
                                   std::vector<GridVariant>& variants) {
  const std::string where = at(source, node.source());
  const auto* array = node.as_array();
  if (!array || array->empty() || !array->is_homogeneous(toml::node_type::table))
    throw ConfigError(where + ": key 'variants': expected a list of tables, one per variant, e.g. " +
                      "[{label = \"DyT\", norm = \"dyt\"}, {label = \"LayerNorm\", norm = \"layernorm\"}]");
  std::vector<Entry> entries{Entry{"label", true, {}, {}, true}};
  const Config defaults;
  for (std::size_t i = 0; i < array->size(); ++i) {
    const std::string item_where = at(source, (*array)[i].source());
    auto keys = variant_keys(*(*array)[i].as_table(), item_where, source);
    variants.push_back(grid_variant(keys));
    if (std::none_of(keys.begin(), keys.end(), [](const auto& kv) { return kv.first == "label"; }))
      keys.emplace_back("label", KeyValue(variants.back().label));
    for (const auto& [key, value] : keys) {
      const std::string& name = key;  // a lambda may not capture a structured binding in clang 14
      auto e = std::find_if(entries.begin(), entries.end(), [&](const Entry& x) { return x.key == name; });
      if (e == entries.end()) {  // a key new at variant i: the earlier variants take its default
        e = entries.insert(entries.end(), Entry{name, true, {}, {}, true});
        for (std::size_t j = 0; j < i; ++j) {
          e->values.push_back(find_key(name)->get(defaults));
          e->where.push_back(entries.front().where[j]);
        }
      }
      e->values.push_back(value);
      e->where.push_back(item_where);
    }
    for (auto& e : entries)
      if (e.values.size() == i) {  // a key this variant leaves out
        e.values.push_back(find_key(e.key)->get(defaults));
        e.where.push_back(item_where);
      }
    const auto& labels = entries.front().values;
    if (std::find(labels.begin(), labels.end() - 1, labels.back()) != labels.end() - 1)
      throw ConfigError(item_where + ": key 'variants': two variants are named " +
                        format_toml(labels.back()) + " (each label names one line of the figures)");
  }
  return entries;
}

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(" \t") - b + 1));
}

// A TOML value, or nullopt when `text` is not one.
std::optional<toml::table> parse_toml_value(const std::string& text) {
  try {
    const std::string doc = "v = " + text;
    return toml::parse(std::string_view(doc), std::string_view("--set"));
  } catch (const toml::parse_error&) {
    return std::nullopt;
  }
}

// "key=value" -> the key and its values. The value is TOML; where it is not, a bare word is a string and a
// bracketed list of bare words is a list of strings, so `--set placement=[pre,post]` works unquoted.
std::pair<std::string, std::vector<KeyValue>> parse_override(const std::string& arg, bool& list) {
  const std::string where = "--set " + arg;
  const auto eq = arg.find('=');
  if (eq == std::string::npos) throw ConfigError(where + ": expected key=value");
  std::string name = trim(std::string_view(arg).substr(0, eq));
  const std::string text = trim(std::string_view(arg).substr(eq + 1));
  if (name.empty()) throw ConfigError(where + ": expected key=value");
  if (text.empty()) throw ConfigError(where + ": no value after '='");
  std::vector<KeyValue> values;
  std::string why;
  const auto add = [&](const toml::node& node) {
    const auto v = scalar(node, why);
    if (!v) throw ConfigError(where + ": key '" + name + "': " + why);
    values.push_back(*v);
  };
  if (auto doc = parse_toml_value(text)) {
    const toml::node& node = *doc->get("v");
    list = node.is_array();
    if (list)
      for (const auto& item : *node.as_array()) add(item);
    else
      add(node);
  } else if (text.size() >= 2 && text.front() == '[' && text.back() == ']') {
    list = true;
    std::stringstream items(text.substr(1, text.size() - 2));
    for (std::string item; std::getline(items, item, ',');) {
      item = trim(item);
      if (item.empty()) throw ConfigError(where + ": key '" + name + "': empty item in the list");
      if (auto doc = parse_toml_value(item))
        add(*doc->get("v"));
      else
        values.push_back(KeyValue(item));
    }
  } else {
    list = false;
    values.push_back(KeyValue(text));
  }
  if (list && values.empty())
    throw ConfigError(where + ": key '" + name + "': an empty list sweeps over nothing");
  return {name, values};
}

std::string describe_point(const std::vector<Entry>& entries, const std::vector<std::size_t>& pick,
                           std::size_t id, std::size_t total) {
  std::string s;
  for (std::size_t e = 0; e < entries.size(); ++e)
    if (entries[e].list)
      s += (s.empty() ? "" : ", ") + entries[e].key + "=" + format_toml(entries[e].values[pick[e]]);
  if (s.empty()) return "";
  return " (config " + std::to_string(id) + " of " + std::to_string(total) + ": " + s + ")";
}

// Where an issue of config `pick` is best blamed: the key's own line, else the line of a related key the
// file sets, else the file.
std::string blame(const ConfigIssue& issue, const std::vector<Entry>& entries,
                  const std::vector<std::size_t>& pick) {
  std::vector<std::string> candidates{issue.key};
  candidates.insert(candidates.end(), issue.related.begin(), issue.related.end());
  for (const auto& name : candidates) {
    const auto e =
        std::find_if(entries.begin(), entries.end(), [&](const Entry& x) { return x.key == name; });
    if (e != entries.end()) return e->where[pick[std::size_t(e - entries.begin())]];
  }
  return "";
}

// Every configuration of the grid, validated. All problems are reported at once (each distinct one once,
// at most kMaxReported lines), not only the first.
std::vector<Config> build_configs(const std::vector<Entry>& entries, std::size_t total,
                                  const std::string& source) {
  constexpr std::size_t kMaxReported = 20;
  std::vector<Config> configs;
  configs.reserve(total);
  std::vector<std::string> problems;
  std::size_t more = 0;
  std::vector<std::size_t> pick(entries.size());
  for (std::size_t id = 0; id < total; ++id) {
    // Mixed-radix digits of id, the last entry varying fastest; the variants' entries share one digit, that
    // of their first entry.
    const auto first_variant =
        std::find_if(entries.begin(), entries.end(), [](auto& e) { return e.variant; });
    for (std::size_t rest = id, e = entries.size(); e-- > 0;) {
      if (entries[e].variant && entries.begin() + std::ptrdiff_t(e) != first_variant) continue;
      pick[e] = rest % entries[e].values.size();
      rest /= entries[e].values.size();
    }
    for (std::size_t e = 0; e < entries.size(); ++e)
      if (entries[e].variant) pick[e] = pick[std::size_t(first_variant - entries.begin())];
    Config c;
    for (std::size_t e = 0; e < entries.size(); ++e)
      find_key(entries[e].key)->set(c, entries[e].values[pick[e]]);
    for (const ConfigIssue& issue : validate(c)) {
      const std::string where = blame(issue, entries, pick);
      std::string line = (where.empty() ? source : where) + ": " + issue.what();
      if (std::find_if(problems.begin(), problems.end(),
                       [&](const std::string& p) { return p.starts_with(line); }) != problems.end())
        continue;
      if (problems.size() == kMaxReported) {
        ++more;
        continue;
      }
      problems.push_back(line + describe_point(entries, pick, id, total));
    }
    configs.push_back(std::move(c));
  }
  if (problems.empty()) return configs;
  std::string all;
  for (const auto& p : problems) all += (all.empty() ? "" : "\n") + p;
  if (more) all += "\n(and " + std::to_string(more) + " more problems)";
  throw ConfigError(all);
}

// One warning per key the file or --set gives that no configuration reads.
std::vector<std::string> unused_keys(const std::vector<Entry>& entries, const std::vector<Config>& configs) {
  std::vector<std::string> out;
  for (const auto& e : entries) {
    std::string why;
    for (const Config& c : configs) {
      why = why_key_unused(e.key, c);
      if (why.empty()) break;
    }
    if (!why.empty())
      out.push_back(e.where.front() + ": key '" + e.key + "' has no effect: " + why +
                    " (ignored; --strict refuses it)");
  }
  return out;
}

}  // namespace

std::span<const RunKey> run_table_keys() {
  return kRunKeys;
}

namespace {

// The [run] table's name and description into the grid.
void read_run_table(const std::string& where, const std::string& name, const toml::table& table,
                    const std::string& source, Grid& grid) {
  if (name != "run")
    throw ConfigError(where + ": unknown table [" + name +
                      "] (keys sit at the top level; only [run] is a table)");
  for (const auto& [rk, rnode] : table) {
    const std::string rwhere = source + ":" + std::to_string(rk.source().begin.line);
    const std::string rname(rk.str());
    const auto* s = rnode.as_string();
    if (rname != "name" && rname != "description")
      throw ConfigError(rwhere + ": unknown key 'run." + rname +
                        "' (the [run] table holds name, description)");
    if (!s) throw ConfigError(rwhere + ": key 'run." + rname + "': expected string");
    (rname == "name" ? grid.name : grid.description) = s->get();
  }
}

// One --set override as an entry (nullopt for run.name and run.description, which go to the grid).
std::optional<Entry> override_entry(const std::string& arg, Grid& grid) {
  bool list = false;
  auto [name, raw] = parse_override(arg, list);
  const std::string where = "--set " + arg;
  if (name == "run.name" || name == "run.description") {
    const auto* s = raw.size() == 1 && !list ? std::get_if<std::string>(&raw[0]) : nullptr;
    if (!s) throw ConfigError(where + ": key '" + name + "': expected string");
    (name == "run.name" ? grid.name : grid.description) = *s;
    return std::nullopt;
  }
  const KeyInfo& key = known_key(name, where);
  if (key.type == KeyType::name_list && list) {
    raw = {name_list(key, raw, [&](std::size_t) { return where; })};
    list = false;
  }
  Entry e{name, list, {}, {}};
  for (const auto& v : raw) {
    e.values.push_back(checked(key, v, where));
    e.where.push_back(where);
  }
  return e;
}

// The keys that --set gives: the file's values of these are replaced unread (a bad one is not reported).
std::vector<std::string> overridden_keys(std::span<const std::string> overrides) {
  std::vector<std::string> keys;
  for (const auto& arg : overrides)
    if (const auto eq = arg.find('='); eq != std::string::npos)
      keys.push_back(trim(std::string_view(arg).substr(0, eq)));
  return keys;
}

}  // namespace

Grid parse_grid(std::string_view toml_text, const std::string& source,
                std::span<const std::string> overrides) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    throw ConfigError(at(source, e.source()) + ": TOML syntax error: " + std::string(e.description()));
  }

  Grid grid;
  grid.config_file = source;
  grid.name = std::filesystem::path(source).stem().string();

  // toml++ keeps keys sorted by name; the grid's order is the file's, so sort by source position.
  std::vector<std::pair<const toml::key*, const toml::node*>> items;
  for (const auto& [k, node] : root) items.emplace_back(&k, &node);
  const auto pos = [](const toml::key* k) {
    return std::pair(k->source().begin.line, k->source().begin.column);
  };
  std::sort(items.begin(), items.end(),
            [&](const auto& a, const auto& b) { return pos(a.first) < pos(b.first); });

  // Every key is checked on its own, and all their problems are reported at once.
  std::string problems;
  const auto collecting = [&](const auto& step) {
    try {
      step();
    } catch (const ConfigError& e) {
      problems += (problems.empty() ? "" : "\n") + std::string(e.what());
    }
  };
  std::vector<Entry> entries;
  const auto overridden = overridden_keys(overrides);
  for (const auto& [k, node] : items)
    collecting([&, k = k, node = node] {
      const std::string name(k->str());
      if (const auto* table = node->as_table())
        read_run_table(source + ":" + std::to_string(k->source().begin.line), name, *table, source, grid);
      else if (name == "variants") {
        auto variants = variant_entries(*node, source, grid.variants);
        entries.insert(entries.end(), variants.begin(), variants.end());
      } else if (std::find(overridden.begin(), overridden.end(), name) != overridden.end())
        entries.push_back(Entry{name, false, {}, {}});  // keeps the file's order; --set fills it below
      else
        entries.push_back(entry_from_node(name, *node, source));
    });
  for (const auto& arg : overrides)
    collecting([&] {
      auto e = override_entry(arg, grid);
      if (!e) return;
      const auto same =
          std::find_if(entries.begin(), entries.end(), [&](const Entry& x) { return x.key == e->key; });
      if (same != entries.end())
        *same = std::move(*e);
      else
        entries.push_back(std::move(*e));
    });
  if (!problems.empty()) throw ConfigError(problems);

  std::size_t total = 1;
  bool variants_counted = false;
  for (const auto& e : entries) {
    if (e.list) grid.swept_keys.push_back(e.key);
    if (std::count_if(entries.begin(), entries.end(), [&](const Entry& x) { return x.key == e.key; }) > 1)
      throw ConfigError(e.where.front() + ": key '" + e.key +
                        "' is set both at the top level and in `variants` (set it in one place)");
    if (e.variant && std::exchange(variants_counted, true)) continue;  // the variants are one dimension
    if (total > kMaxGridSize / e.values.size())
      throw ConfigError(e.where.front() + ": key '" + e.key + "': the grid would hold more than " +
                        std::to_string(kMaxGridSize) + " configurations");
    total *= e.values.size();
  }

  grid.configs = build_configs(entries, total, source);
  grid.unused_keys = unused_keys(entries, grid.configs);
  return grid;
}

namespace {
// Whether TOML text holds nothing but blank lines and comments.
bool blank_toml(const std::string& text) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first != std::string::npos && line[first] != '#') return false;
  }
  return true;
}
}  // namespace

Grid load_grid(const std::filesystem::path& file, std::span<const std::string> overrides) {
  std::error_code ec;
  if (std::filesystem::is_directory(file, ec))
    throw ConfigError(file.string() + ": is a folder, not a config file (give a .toml file, e.g. " +
                      "experiments/quickstart.toml)");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ConfigError(file.string() + ": cannot read the config file: " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(file.string() + ": cannot read the config file: " + std::strerror(errno));
  // An empty file is more often a mistake than a wish for every default (experiments/README.md).
  if (blank_toml(text.str()) && overrides.empty())
    throw ConfigError(file.string() + ": the config file sets no key; give at least one (e.g. depth = 16) " +
                      "or --set KEY=VALUE to run the defaults with a change");
  return parse_grid(text.str(), file.string(), overrides);
}

}  // namespace normsim::sim
