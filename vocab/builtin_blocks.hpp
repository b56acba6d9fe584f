// The block expression (vocab/block_expr.hpp) that defines each built-in placement; "" for Admin (code: its
// omega is measured) and for custom (the config's `block`).
#pragma once
#include <string_view>

#include "vocab/enums.hpp"

namespace normsim::vocab {

std::string_view builtin_block(Placement p);

}  // namespace normsim::vocab
