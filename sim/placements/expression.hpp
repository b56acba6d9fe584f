// A placement given by a block expression (vocab/block_expr.hpp): every built-in but Admin is one, and so
// is placement = "custom" with the key `block`. One interpreter (vocab::eval_stream) runs the expression
// against StackOps, so the CPU and CUDA backends both run every placement.
#pragma once
#include <string>
#include <string_view>

#include "sim/placement.hpp"
#include "vocab/block_eval.hpp"
#include "vocab/block_expr.hpp"

namespace normsim::sim {

// A paper's init rule for a placement: the multiplier of a weight kind's std (1: none).
using InitMultiplier = double (*)(const StackShape&, WeightKind);

class ExpressionPlacement final : public Placement {
 public:
  // block: the expression; source: its paper, shown after it by `normsim list placements`.
  ExpressionPlacement(vocab::Placement id, std::string_view block, std::string_view source,
                      InitMultiplier init = nullptr);
  vocab::Placement id() const override { return id_; }
  std::string_view summary() const override { return summary_; }
  std::string_view expression() const override { return expression_; }
  bool reads_embedding() const override { return reads_embedding_; }
  bool reads_first_values() const override { return reads_first_values_; }
  int span() const override { return block_.span(); }
  bool ends_in_norm(const StackShape& s) const override;
  double init_multiplier(const StackShape& s, WeightKind w) const override {
    return init_ ? init_(s, w) : 1.0;
  }
  Value sublayer(StackOps& ops, const StackShape& s, int k, Value x, PlacementState& state) const override;
  int lanes() const override { return block_.lanes(); }
  Lanes sublayer_lanes(StackOps& ops, const StackShape& s, int k, const Lanes& x,
                       PlacementState& state) const override;

 private:
  vocab::Placement id_;
  vocab::Block block_;
  std::string expression_, summary_;
  bool reads_embedding_;     // whether the block reads emb, found once at parse time
  bool reads_first_values_;  // whether it calls Fv (V_1)
  InitMultiplier init_;
};

// What the numbers of an expression read at sublayer k: k, K, b, L, attention and the numeric config keys
// (deepnorm_alpha and deepnorm_beta as DeepNorm uses them: 0 means the depth's default).
vocab::ScalarEnv scalar_env(const StackShape& s, int k);

}  // namespace normsim::sim
