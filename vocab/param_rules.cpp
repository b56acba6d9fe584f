// The parser of parametrization rules (vocab/param_rules.hpp): the rule structure here, each expression by
// the block language's parse_scalar, its columns shifted to the whole text.
#include "vocab/param_rules.hpp"

#include <algorithm>
#include <array>
#include <cctype>

#include "vocab/weight_kinds.hpp"

namespace normsim::vocab {
namespace {

constexpr std::array<std::string_view, 5> kFields{"std", "mult", "lr_sgd", "lr_adam", "eps"};

// A piece of the text and the 1-based column of its first character.
struct Piece {
  std::string_view text;
  int column;
};

Piece trimmed(Piece p) {
  while (!p.text.empty() && std::isspace(static_cast<unsigned char>(p.text.front())))
    p.text.remove_prefix(1), ++p.column;
  while (!p.text.empty() && std::isspace(static_cast<unsigned char>(p.text.back()))) p.text.remove_suffix(1);
  return p;
}

// The pieces of p between the separator `sep` (ASCII columns: the rule text's names are ASCII; a non-ASCII
// character is refused by the expression parser at its column).
std::vector<Piece> split(Piece p, char sep) {
  std::vector<Piece> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= p.text.size(); ++i)
    if (i == p.text.size() || p.text[i] == sep) {
      out.push_back({p.text.substr(start, i - start), p.column + int(start)});
      start = i + 1;
    }
  return out;
}

std::vector<std::string> selectors_of(Piece p) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < p.text.size()) {
    if (std::isspace(static_cast<unsigned char>(p.text[i]))) {
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < p.text.size() && !std::isspace(static_cast<unsigned char>(p.text[i]))) ++i;
    const std::string name(p.text.substr(start, i - start));
    const auto& known = param_selectors();
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      std::string list;
      for (std::string_view s : known) list += (list.empty() ? "" : ", ") + std::string(s);
      throw ExprError(p.column + int(start), "unknown selector '" + name + "' (known: " + list + ")");
    }
    out.push_back(name);
  }
  if (out.empty()) throw ExprError(p.column, "a rule names no matrix before ':'");
  return out;
}

ParamAssignment assignment(Piece p, const std::vector<std::string>& selectors, int selector_column) {
  const std::size_t eq = p.text.find('=');
  if (eq == std::string_view::npos) throw ExprError(p.column, "expected 'field = expression'");
  const Piece name = trimmed({p.text.substr(0, eq), p.column});
  const auto f = std::find(kFields.begin(), kFields.end(), name.text);
  if (f == kFields.end())
    throw ExprError(name.column, "unknown field '" + std::string(name.text) +
                                     "' (known: std, mult, lr_sgd, lr_adam, eps)");
  ParamAssignment a{selectors, ParamField(f - kFields.begin()), {}, 0, selector_column};
  const bool branch = std::find(selectors.begin(), selectors.end(), "branch") != selectors.end();
  if (branch && a.field != ParamField::mult)
    throw ExprError(name.column, "the branch selector has one field, mult (the branch multiplier)");
  const Piece value = trimmed({p.text.substr(eq + 1), p.column + int(eq) + 1});
  a.column = value.column;
  try {
    a.value = parse_scalar(value.text, ScalarScope::matrix);
  } catch (const ExprError& e) {
    const std::string what = e.what();
    throw ExprError(value.column + e.column() - 1, what.substr(what.find(": ") + 2));
  }
  return a;
}

}  // namespace

// The edge matrices, every weight kind (vocab/weight_kinds.hpp, in its order), then the groups.
const std::vector<std::string_view>& param_selectors() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out{"embedding", "readout"};
#define NORMSIM_WEIGHT_KIND_SELECTOR(kind, ...) out.push_back(#kind);
    NORMSIM_WEIGHT_KINDS(NORMSIM_WEIGHT_KIND_SELECTOR)
#undef NORMSIM_WEIGHT_KIND_SELECTOR
    out.insert(out.end(), {"hidden", "in_proj", "out_proj", "all", "branch"});
    return out;
  }();
  return names;
}

std::string_view field_name(ParamField f) {
  return kFields[std::size_t(f)];
}

std::vector<ParamAssignment> parse_param_rules(std::string_view text) {
  std::vector<ParamAssignment> out;
  for (const Piece& rule : split({text, 1}, ';')) {
    const Piece r = trimmed(rule);
    if (r.text.empty()) continue;  // "a; ; b" and a trailing ';'
    const std::size_t colon = r.text.find(':');
    if (colon == std::string_view::npos)
      throw ExprError(r.column, "expected 'selector: field = expression' (no ':' in this rule)");
    const std::vector<std::string> selectors = selectors_of({r.text.substr(0, colon), r.column});
    for (const Piece& a : split({r.text.substr(colon + 1), r.column + int(colon) + 1}, ','))
      out.push_back(assignment(trimmed(a), selectors, r.column));
  }
  return out;
}

}  // namespace normsim::vocab
