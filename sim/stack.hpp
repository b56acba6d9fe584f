// The shape of a residual stack derived from a Config: sizes, which branch each sublayer has, block
// indices, and the weight matrices of each sublayer. Conventions (depth counts sublayers, ...) are in
// docs/conventions.md.
#pragma once
#include <string_view>
#include <vector>

#include "sim/activations.hpp"
#include "sim/config.hpp"
#include "sim/philox.hpp"
#include "sim/rownorm.hpp"

namespace normsim::sim {

// cross_attention: the decoder's attention from the stream (queries) to a fixed encoder output (keys,
// values).
enum class BranchKind { mlp, attention, cross_attention };

// Weight matrices, named as in the metric names gradw_<name>; the value is the Philox stream id. cq, ck,
// cv, co are the decoder's cross-attention matrices (own names, so that gradw_wq is always self-attention).
enum class WeightKind {
  w1 = 0,
  w2 = 1,
  wgate = 2,
  wq = 3,
  wk = 4,
  wv = 5,
  wo = 6,
  cq = 7,
  ck = 8,
  cv = 9,
  co = 10
};
inline constexpr int kWeightKinds = 11;
std::string_view weight_name(WeightKind w);

struct StackShape {
  explicit StackShape(const Config& config);

  Config cfg;
  int depth;   // K sublayers
  int width;   // d
  int tokens;  // T
  int hidden;  // MLP hidden width round(mlp_ratio * d)
  int heads;
  bool swiglu;
  Activation act;  // the MLP activation (silu for swiglu)
  NormKind norm;

  BranchKind branch(int k) const;
  int block(int k) const;  // 0-based block index b(k)
  int blocks() const;      // L
  int block_size() const;  // sublayers per block: 2 (transformer), 3 (decoder), else 1
  std::vector<WeightKind> weights(int k) const;
  int fan_in(WeightKind w) const;
  int fan_out(WeightKind w) const;
};

// The pointwise activation of an MLP branch (swiglu -> silu, its gate).
Activation pointwise_activation(vocab::Activation a);

}  // namespace normsim::sim
