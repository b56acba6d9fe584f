// The sublayer layout: which branch each sublayer of a block runs, one row per sublayer kind. The simulator
// (sim/stack.cpp), the mean field (theory/stack_spec.cpp, theory/placements/context.hpp), the config's checks
// (sim/run/config_schema.cpp), the cost model (sim/unit_plan.cpp) and the claims' layer spans (check/) read
// this row; a new sublayer kind that arranges existing branches is one row here (docs/architecture.md §3.5).
#pragma once
#include <algorithm>
#include <array>
#include <string_view>

#include "vocab/enums.hpp"

namespace normsim::vocab {

// The branch of a sublayer. cross_attention: the decoder's attention from the stream (queries) to a fixed
// encoder output (keys, values).
enum class BranchKind { mlp, attention, cross_attention };

struct SublayerLayout {
  Sublayer kind;
  int size;                          // sublayers per block (depth must be a multiple)
  std::array<BranchKind, 3> branch;  // the branch of the block's sublayer j < size

  BranchKind branch_at(int k) const { return branch[static_cast<unsigned>(k % size)]; }
  // Whether sublayer k attends (self- or cross-attention): the block language's `attention`.
  bool attends_at(int k) const { return branch_at(k) != BranchKind::mlp; }
  bool has(BranchKind b) const;
  bool has_attention() const { return has(BranchKind::attention) || has(BranchKind::cross_attention); }
  // The share of sublayers that attend (the cost model's weighting).
  double attention_share() const;
};

const SublayerLayout& layout(Sublayer kind);
std::string_view branch_name(BranchKind b);  // "mlp", "attention", "cross-attention"

// The sublayers one unit of a placement covers: 1 for a one-sublayer placement; a placement that spans
// `span` > 1 sublayers (a pair) covers `span`, or a whole block where the block is longer (the decoder's
// layer of 3: the pair's first expression runs at the self- and the cross-attention, the second at the MLP,
// and x0 is the layer's input: B2T's decoder, arXiv 2206.00330, takase/b2t_connection transformer_layer.py).
inline int unit_sublayers(int span, Sublayer kind) {
  return span == 1 ? 1 : std::max(span, layout(kind).size);
}

}  // namespace normsim::vocab
