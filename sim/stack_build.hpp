// Builds a whole stack through any backend's StackOps: optional embedding and input norm, K sublayers of
// the placement, optional final norm and readout (sim/edges.hpp). The streams x_0..x_K are what the metrics
// look at.
#pragma once
#include <vector>

#include "sim/placement.hpp"
#include "sim/stack_ops.hpp"

namespace normsim::sim {

struct StackValues {
  std::vector<Value> stream;  // x_0 .. x_K; with n > 1 lanes, each layer's lanes' mean (off the loss path)
  std::vector<Lanes> lanes;   // with n > 1 lanes only: x_0 .. x_K's lanes
  Value output;               // y: x_K, or N(x_K) when a final norm applies; with lanes, of their sum
  Value logits;               // z = y W_out with a readout matrix (sim/edges.hpp); else invalid
  // What the loss reads: the logits, or y without a readout matrix.
  Value loss_input() const { return logits.valid() ? logits : output; }
};

// Whether a final norm maps x_K to the output (final_norm: auto = when the placement does not end in one).
bool applies_final_norm(const StackShape& s, const Placement& p);

// state: optional, to read what the placement carried (or to replay Admin's omega).
StackValues build_stack(StackOps& ops, const StackShape& s, const Placement& p, Value input,
                        PlacementState* state = nullptr);

// Sublayers [first, last) only (activation checkpointing rebuilds a stack segment by segment): from the raw
// input (the embedding's u where there is one) through the embedding and the input norm when first == 0,
// else from x_first; the output (final norm) and the logits only when last == depth, else output = x_last.
// `state` carries from one segment to the next as build_stack carries it between sublayers (build_stack
// resets it first; here the caller does); first must be a multiple of p.span(), so that no unit of the
// placement is split. A placement of n > 1 lanes is built whole (first = 0, last = depth): a segment boundary
// would carry n values.
StackValues build_segment(StackOps& ops, const StackShape& s, const Placement& p, Value x, int first,
                          int last, PlacementState& state);

}  // namespace normsim::sim
