// The shape of a residual stack derived from a Config: sizes, which branch each sublayer has, block
// indices, and the weight matrices of each sublayer. Conventions (depth counts sublayers, ...) are in
// docs/conventions.md.
#pragma once
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include "sim/activations.hpp"
#include "sim/config.hpp"
#include "sim/philox.hpp"
#include "sim/rownorm.hpp"
#include "vocab/sublayer_layout.hpp"
#include "vocab/weight_kinds.hpp"

namespace normsim::sim {

using BranchKind = vocab::BranchKind;  // which branch a sublayer runs (vocab/sublayer_layout.hpp)

// Weight matrices, one per row of vocab/weight_kinds.hpp (named as in the metric names gradw_<name>), each
// its own Philox stream. cq, ck, cv, co are the decoder's cross-attention matrices (own names, so that
// gradw_wq is always self-attention); wga is the self-attention's output gate W_g (attention_gate: d x d
// elementwise, d x heads headwise); wrouter a routed MLP's router (moe_experts > 0).
enum class WeightKind : std::uint32_t {
#define NORMSIM_WEIGHT_KIND_ENUM(kind, ...) kind = std::uint32_t(Stream::kind),
  NORMSIM_WEIGHT_KINDS(NORMSIM_WEIGHT_KIND_ENUM)
#undef NORMSIM_WEIGHT_KIND_ENUM
};
#define NORMSIM_WEIGHT_KIND_COUNT(...) +1
inline constexpr int kWeightKinds = 0 NORMSIM_WEIGHT_KINDS(NORMSIM_WEIGHT_KIND_COUNT);
#undef NORMSIM_WEIGHT_KIND_COUNT
// Kinds index arrays (0..kWeightKinds-1, in the table's order), so each kind's stream id must be its row.
constexpr bool weight_kinds_are_their_rows() {
  constexpr WeightKind kinds[] = {
#define NORMSIM_WEIGHT_KIND_VALUE(kind, ...) WeightKind::kind,
      NORMSIM_WEIGHT_KINDS(NORMSIM_WEIGHT_KIND_VALUE)
#undef NORMSIM_WEIGHT_KIND_VALUE
  };
  for (int i = 0; i < kWeightKinds; ++i)
    if (std::uint32_t(kinds[i]) != std::uint32_t(i)) return false;
  return true;
}
static_assert(weight_kinds_are_their_rows(), "vocab/weight_kinds.hpp: a kind's row must be its Stream id");
// Whether matrix kind w writes the stream, its output the branch's (fan_out = d): W_2, W_O and the decoder's
// C_O (vocab/weight_kinds.hpp's writes_stream); the out_proj of the parametrization rules and the matrices
// output-scaling init rules act on.
constexpr bool writes_stream(WeightKind w) {
  constexpr bool rows[] = {
#define NORMSIM_WEIGHT_KIND_WRITES(kind, init_key, writes_stream, ...) writes_stream,
      NORMSIM_WEIGHT_KINDS(NORMSIM_WEIGHT_KIND_WRITES)
#undef NORMSIM_WEIGHT_KIND_WRITES
  };
  return rows[std::size_t(w)];
}
// A weight matrix's identity: its kind and an index, the expert e of a routed MLP (sim/cpu/cpu_moe.hpp), 0
// for every other matrix. The index enters the Philox key in the stream word's upper bits (indexed_stream),
// so {kind, 0} draws exactly what the kind alone drew: expert 0 of a routed MLP has the dense MLP's weights.
struct WeightId {
  constexpr WeightId(WeightKind k, std::uint32_t i = 0) : kind(k), index(i) {}  // NOLINT: implicit on purpose
  WeightKind kind;
  std::uint32_t index;
};
// A parameter of a weight matrix: the matrix itself or its bias (bias = true: a row of fan_out entries added
// to every token of the product, sim/init.hpp bias_std).
enum class Part : std::uint32_t { weight = 0, bias = 1 };
inline constexpr int kParts = 2;
// A parameter's slot in per-sublayer arrays of kParts * kWeightKinds: by Part, then WeightKind.
constexpr std::size_t param_slot(WeightKind w, Part part) {
  return std::size_t(part) * kWeightKinds + std::size_t(w);
}
// The Philox stream a parameter is drawn from; kinds are 0..kWeightKinds-1 (they index arrays). A bias has
// its own streams (bias_base + kind), so no weight's draw moves when biases are on.
constexpr Stream param_stream(WeightId w, Part part = Part::weight) {
  const std::uint32_t base = part == Part::bias ? std::uint32_t(Stream::bias_base) : 0u;
  return indexed_stream(static_cast<Stream>(base + std::uint32_t(w.kind)), w.index);
}
constexpr Stream weight_stream(WeightId w) {
  return param_stream(w);
}
// The Philox stream of a parameter's random update direction (update = "random", sim/single_update.hpp).
constexpr Stream update_stream(WeightId w, Part part = Part::weight) {
  const Stream base = part == Part::bias ? Stream::bias_update_base : Stream::update_base;
  return indexed_stream(static_cast<Stream>(std::uint32_t(base) + std::uint32_t(w.kind)), w.index);
}
static_assert(std::uint32_t(Stream::update_base) + kWeightKinds <= std::uint32_t(Stream::bias_base));
static_assert(std::uint32_t(Stream::bias_base) + kWeightKinds <= std::uint32_t(Stream::bias_update_base));
static_assert(std::uint32_t(Stream::bias_update_base) + kWeightKinds <= (1u << kStreamIndexShift));
std::string_view weight_name(WeightKind w);

class ResolvedRules;

struct StackShape {
  explicit StackShape(const Config& config);

  Config cfg;
  int depth;    // K sublayers
  int width;    // d
  int tokens;   // T
  int hidden;   // MLP hidden width round(mlp_ratio * d)
  int experts;  // routed MLP: E experts (moe_experts; 0: a dense MLP)
  int heads;
  vocab::AttentionGate gate;  // attention_gate (self-attention only)
  bool swiglu;
  Activation act;  // the MLP activation (silu for swiglu)
  NormKind norm;
  // The parametrization's rules resolved per matrix (sim/parametrization.hpp); null for "none".
  std::shared_ptr<const ResolvedRules> rules;

  BranchKind branch(int k) const;
  int block(int k) const;  // 0-based block index b(k)
  int blocks() const;      // L
  int block_size() const;  // sublayers per block (vocab::layout)
  std::vector<WeightKind> weights(int k) const;
  int fan_in(WeightKind w) const;
  int fan_out(WeightKind w) const;
};

// The pointwise activation of an MLP branch (swiglu -> silu, its gate).
Activation pointwise_activation(vocab::Activation a);

}  // namespace normsim::sim
