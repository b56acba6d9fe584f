// Which config keys a configuration actually reads: a key set for a placement, sublayer or init rule that
// does not use it (deepnorm_alpha with placement "pre", heads with sublayer "mlp") changes nothing. The
// config layer warns once per such key, and refuses it under --strict.
#pragma once
#include <string>
#include <string_view>

#include "sim/config.hpp"

namespace normsim::sim {

// Whether any weight matrix is drawn with `init` (the init key or a per-matrix override "rule:value"); the
// edge matrices (sim/edges.hpp) take the init key's rule.
bool uses_init_rule(const Config& c, vocab::Init init);

// Why `key` has no effect in `c` ("placement = \"pre\" has no DeepNorm alpha"), or "" when it is read.
std::string why_key_unused(std::string_view key, const Config& c);

}  // namespace normsim::sim
