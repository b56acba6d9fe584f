// Which config keys a configuration actually reads: a key set for a placement, sublayer or init rule that
// does not use it (deepnorm_alpha with placement "pre", heads with sublayer "mlp") changes nothing. The
// config layer warns once per such key, and refuses it under --strict.
#pragma once
#include <string>
#include <string_view>

#include "sim/config.hpp"

namespace normsim::sim {

// Why `key` has no effect in `c` ("placement = \"pre\" has no DeepNorm alpha"), or "" when it is read.
std::string why_key_unused(std::string_view key, const Config& c);

}  // namespace normsim::sim
