#include "sim/stack_build.hpp"

#include <stdexcept>
#include <string>
#include <unordered_set>

#include "sim/edges.hpp"
#include "sim/norm_site.hpp"
#include "sim/parametrization.hpp"
#include "sim/placements/expression.hpp"
#include "vocab/block_eval.hpp"
#include "vocab/names.hpp"

namespace normsim::sim {
namespace {

// StackOps whose branch outputs are multiplied by branch_scale at sublayer k times the parametrization's
// branch multiplier (any placement, Admin too).
// A scale of exactly 1 adds nothing to the graph.
class BranchScaledOps final : public StackOps {
 public:
  BranchScaledOps(StackOps& inner, const StackShape& s)
      : inner_(inner), shape_(s), scale_(vocab::parse_scalar(s.cfg.branch_scale)) {}
  int batch() const override { return inner_.batch(); }
  Value norm(Value x, NormAt at) override { return inner_.norm(x, at); }
  Value add(Value a, Value b) override { return inner_.add(a, b); }
  Value scale(Value a, const Scalars& s) override { return inner_.scale(a, s); }
  using StackOps::scale;
  Scalars mean_sq(Value a) override { return inner_.mean_sq(a); }
  Value project(Value a, Edge e) override { return inner_.project(a, e); }
  Value branch(int k, Value u, bool qkv_norm) override { return scaled(k, inner_.branch(k, u, qkv_norm)); }
  Value branch_value(int k, Value u, double lam, Value& first) override {
    return scaled(k, inner_.branch_value(k, u, lam, first));
  }

 private:
  Value scaled(int k, Value f) {
    double s = vocab::eval_scalar(scale_, scale_.root, scalar_env(shape_, k));
    if (shape_.rules) s *= shape_.rules->branch_mult(k);  // the parametrization's branch multiplier
    return s == 1.0 ? f : inner_.scale(f, s);
  }

  StackOps& inner_;
  const StackShape& shape_;
  vocab::Expr scale_;
};

// Sum of the lanes (n > 1), left to right.
Value lanes_sum(StackOps& ops, const Lanes& lanes) {
  Value sum = lanes.front();
  for (std::size_t i = 1; i < lanes.size(); ++i) sum = ops.add(sum, lanes[i]);
  return sum;
}

// Lanes of their own: a lane whose Value is already a lane or x_0 (x_0's copies, a lane passed on unchanged
// or moved to another lane by the mixing) becomes a copy of it (an exact scale by 1), so that the tape's
// gradient of every lane at every layer is that lane's alone (the per-lane grad_sq, design 3.3), not the
// sum over the places one Value holds.
void own_values(StackOps& ops, Lanes& x, std::unordered_set<int>& seen) {
  for (Value& v : x) {
    if (seen.contains(v.id)) v = ops.scale(v, 1.0);
    seen.insert(v.id);
  }
}

// Sublayers of a placement of n > 1 lanes (docs/design/multistream.md 3.1). x_0's lanes are n copies of x_0
// (hyper-connections expand by copying: lucidrains/hyper-connections hyper_connections.py @4775103 l.59),
// so its gradient is the sum of its lanes'; the output reads the lanes' sum (l.61) through the final norm;
// stream[l] is the lanes' mean, for the per-layer metrics.
void build_lanes(StackOps& ops, StackOps& scaled, const StackShape& s, const Placement& p,
                 PlacementState& state, StackValues& out) {
  const int n = p.lanes();
  std::unordered_set<int> seen{out.stream.front().id};
  Lanes x(std::size_t(n), out.stream.front());
  own_values(ops, x, seen);
  out.lanes.push_back(x);
  Value sum;  // of x_k's lanes; after the last sublayer, the readout
  for (int k = 0; k < s.depth; ++k) {
    x = p.sublayer_lanes(scaled, s, k, x, state);
    own_values(ops, x, seen);
    out.lanes.push_back(x);
    sum = lanes_sum(ops, x);
    out.stream.push_back(ops.scale(sum, 1.0 / n));
  }
  out.output = applies_final_norm(s, p) ? ops.norm(sum, final_norm_at(s)) : sum;
}

}  // namespace

Lanes Placement::sublayer_lanes(StackOps& ops, const StackShape& s, int k, const Lanes& x,
                                PlacementState& state) const {
  if (x.size() != 1)
    throw std::invalid_argument("placement '" + std::string(vocab::name(id())) +
                                "' carries one stream, not " + std::to_string(x.size()) + " lanes");
  return {sublayer(ops, s, k, x.front(), state)};
}

bool applies_final_norm(const StackShape& s, const Placement& p) {
  if (s.cfg.final_norm == vocab::FinalNorm::always) return true;
  if (s.cfg.final_norm == vocab::FinalNorm::never) return false;
  return !p.ends_in_norm(s);
}

StackValues build_stack(StackOps& ops, const StackShape& s, const Placement& p, Value input,
                        PlacementState* state_io) {
  PlacementState local;
  PlacementState& state = state_io ? *state_io : local;
  state.saved = Value{};
  state.emb = Value{};
  state.first_values = Value{};
  state.omega_sq.clear();
  // A fresh (non-replay) build records Admin's omega anew; without this a reused state would keep the
  // previous build's values in front and a later replay would read stale ones.
  if (!state.replay) state.omega_sq_used.clear();
  return build_segment(ops, s, p, input, 0, s.depth, state);
}

StackValues build_segment(StackOps& ops, const StackShape& s, const Placement& p, Value x, int first,
                          int last, PlacementState& state) {
  if (first % unit_sublayers(p, s) != 0)
    throw std::invalid_argument("build_segment: a segment splits a placement unit");
  StackValues out;
  out.stream.reserve(last - first + 1);
  if (first == 0 && has_embedding(s.cfg)) x = ops.project(x, Edge::embedding);
  if (first == 0 && s.cfg.input_norm) x = ops.norm(x, norm_at(s, 0));
  if (first == 0) state.emb = x, state.first_values = Value{};
  // A segment rebuilt on its own tape (checkpoints, a block's probes) has no x_0 there to read.
  if (!state.emb.valid() && p.reads_embedding())
    throw std::invalid_argument("build_segment: the block reads emb (x_0), which this segment's tape lacks");
  // V_1 is a value of the first attention's tape; a later segment's tape has none (its Fv would take V_1
  // anew from its own first attention).
  if (first != 0 && p.reads_first_values())
    throw std::invalid_argument("build_segment: the block calls Fv, whose V_1 this segment's tape lacks");
  out.stream.push_back(x);
  BranchScaledOps scaled(ops, s);
  if (p.lanes() > 1) {
    if (first != 0 || last != s.depth)
      throw std::invalid_argument("build_segment: a block of lanes is built whole, not in segments");
    build_lanes(ops, scaled, s, p, state, out);
  } else {
    for (int k = first; k < last; ++k) {
      x = p.sublayer(scaled, s, k, x, state);
      out.stream.push_back(x);
    }
    out.output = last == s.depth && applies_final_norm(s, p) ? ops.norm(x, final_norm_at(s)) : x;
  }
  if (last == s.depth && has_readout(s.cfg)) out.logits = ops.project(out.output, Edge::readout);
  return out;
}

}  // namespace normsim::sim
