#include "app/list_parametrizations.hpp"

#include <string>
#include <string_view>

#include "app/markdown.hpp"
#include "vocab/builtin_parametrizations.hpp"

namespace normsim::app {

namespace {

// What the rules of every preset leave for later steps, said once under the table.
constexpr std::string_view kNote =
    "Rules for the embedding and readout matrices apply where a configuration has them (input_width or "
    "vocab, output_width; docs/parametrizations.md), and to nothing elsewhere. lr_sgd, lr_adam and eps are "
    "resolved and stored for an optimizer of several steps; the one-step update (update = sgd | adam) "
    "refuses a parametrization.";

std::string own_rules(const vocab::BuiltinParametrization& p, std::string_view code) {
  const std::string rules = std::string(code) + std::string(p.rules) + std::string(code);
  if (p.extends.empty()) return rules;
  return std::string(code) + std::string(p.extends) + std::string(code) + "'s, then " + rules;
}

}  // namespace

void list_parametrizations(std::ostream& os, bool markdown) {
  if (markdown) {
    os << "### parametrizations\n\n| name | rules | source | the source also sets |\n|---|---|---|---|\n";
    for (const auto& p : vocab::builtin_parametrizations())
      os << "| `" << p.name << "` | " << md_escape(own_rules(p, "`")) << " | " << md_escape(p.source) << " | "
         << md_escape(p.keys) << " |\n";
    os << "\n" << kNote << "\n";
    return;
  }
  os << "parametrizations (parametrization = NAME; rules, source, what the source also sets):\n";
  for (const auto& p : vocab::builtin_parametrizations()) {
    os << "  " << p.name << ": " << own_rules(p, "") << "\n    source: " << p.source << "\n";
    if (!p.keys.empty()) os << "    also: " << p.keys << "\n";
  }
  os << kNote << "\n";
}

}  // namespace normsim::app
