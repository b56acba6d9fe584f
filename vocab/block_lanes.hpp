// The lanes of a block (docs/design/multistream.md 3.2), for the parser: how many the text has, and the
// rule that its roots reach one branch between them.
#pragma once
#include <string_view>

#include "vocab/block_expr.hpp"

namespace normsim::vocab {

// The most lanes a block may have: every lane is a root the interpreters walk, and the mean field's lanes
// path (design 3.4) holds at most 16 parts. HC and mHC use 2 to 4.
inline constexpr int kMaxLanes = 16;

// n, read from the text before it is parsed (the parser lowers every lanes value to n streams, so it must
// know n when it meets a bare x): the largest lane index of x[i] + 1, the widest literal `[...]`, at least 1.
// The parser then refuses, at its column, every literal whose width is not n. Throws ExprError past
// kMaxLanes.
int lanes_in(std::string_view block_text);

// Throws ExprError unless the sublayer's roots call F as a unit must: n = 1, exactly once on every path
// (both arms of a condition alike); n > 1, at most once on every path of each lane, and one F node between
// all lanes (a lane may skip F: HC's beta_i = 0). offset: the characters before the expression.
void check_branch_calls(const Expr& e, int offset);

}  // namespace normsim::vocab
