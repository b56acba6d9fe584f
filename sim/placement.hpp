// A norm placement: how sublayer k combines the stream x_k with its branch into x_{k+1}. Every built-in
// but Admin is one line of block expression in sim/placements/builtins.cpp (ExpressionPlacement);
// placement = "custom" takes the expression from the config's `block`.
#pragma once
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "sim/stack.hpp"
#include "sim/stack_ops.hpp"

namespace normsim::sim {

// The n residual lanes of a block of lanes (docs/design/multistream.md 3.1; hyper-connections' expanded
// streams), lane i at i. n is small (2 to 4 in HC and mHC).
using Lanes = std::vector<Value>;

// What a placement carries from one sublayer to the next (B2T's bottom residual, Admin's omega^2).
struct PlacementState {
  Value saved;
  Value emb;           // x_0 after the input norm, on this tape: what a block's `emb` reads
  Value first_values;  // V_1 of a block with Fv, once its first attention has run (StackOps::branch_value)
  Scalars omega_sq;
  // Admin's omega^2 used at each sublayer; with replay, these are used instead of being measured (so a
  // finite-difference check can hold omega fixed, as the backward pass does).
  std::vector<Scalars> omega_sq_used;
  bool replay = false;
};

class Placement {
 public:
  virtual ~Placement() = default;
  virtual vocab::Placement id() const = 0;
  virtual std::string_view summary() const = 0;  // one line: the equation and its source
  // The block expression that defines it (vocab/block_expr.hpp), or "" for a built-in that is code (Admin).
  virtual std::string_view expression() const { return ""; }
  // Whether the placement reads the stack's input x_0 at every unit (a block with `emb`).
  virtual bool reads_embedding() const { return false; }
  // Whether it mixes the first attention's values into later ones (a block with Fv: ResFormer's V_1).
  virtual bool reads_first_values() const { return false; }
  // Sublayers one unit of the equation spans (2 for b2t and spannorm: they need an even depth).
  virtual int span() const { return 1; }
  // Whether x_K is already the output of a norm (then no final norm is added by default).
  virtual bool ends_in_norm(const StackShape& s) const = 0;
  // Multiplier of weight std the placement prescribes (DeepNorm's beta); 1 otherwise.
  virtual double init_multiplier(const StackShape&, WeightKind) const { return 1.0; }
  // x_{k+1} from x_k.
  virtual Value sublayer(StackOps& ops, const StackShape& s, int k, Value x, PlacementState& state) const = 0;
  // The residual lanes it carries (a block of lanes: its n); 1 for every placement of one stream.
  virtual int lanes() const { return 1; }
  // The lanes x_{k+1} from the lanes x_k. A placement of one stream runs sublayer() and refuses more lanes.
  virtual Lanes sublayer_lanes(StackOps& ops, const StackShape& s, int k, const Lanes& x,
                               PlacementState& state) const;
};

// Sublayers one unit of the placement covers on this stack (vocab::unit_sublayers, docs/conventions.md).
inline int unit_sublayers(const Placement& p, const StackShape& s) {
  return vocab::unit_sublayers(p.span(), s.cfg.sublayer);
}

// The built-in placement `id` (not custom); throws std::invalid_argument.
const Placement& find_placement(vocab::Placement id);
// The placement a config asks for: a built-in, or its custom block. Throws std::invalid_argument (ExprError)
// on a block that does not parse.
std::shared_ptr<const Placement> placement_for(const Config& c);
std::span<const Placement* const> all_placements();

}  // namespace normsim::sim
