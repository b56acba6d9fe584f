// The alpha and shift a DyT or Derf norm takes where it sits: the norms of sublayer k read the expressions
// norm_alpha and norm_shift at k (what `attention`, k, K, ... are there: sim/placements/expression.hpp), the
// final norm and the decoder's encoder output read final_norm_alpha and final_norm_shift. One rule, read by
// the placements, the stack builder and both backends' encoder outputs.
#pragma once
#include "sim/pointwise_norm.hpp"
#include "sim/stack.hpp"

namespace normsim::sim {

NormAt norm_at(const StackShape& s, int k);
NormAt final_norm_at(const StackShape& s);

}  // namespace normsim::sim
