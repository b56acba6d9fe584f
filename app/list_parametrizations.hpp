// `normsim list parametrizations`: every built-in parametrization's rules, source and the keys the source
// also sets (vocab/builtin_parametrizations.cpp); docs/parametrizations.md holds the Markdown form.
#pragma once
#include <ostream>

namespace normsim::app {

void list_parametrizations(std::ostream& os, bool markdown);

}  // namespace normsim::app
