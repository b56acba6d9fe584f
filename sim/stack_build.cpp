#include "sim/stack_build.hpp"

#include <stdexcept>

#include "sim/norm_site.hpp"
#include "sim/parametrization.hpp"
#include "sim/placements/expression.hpp"
#include "vocab/block_eval.hpp"

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
  Value branch(int k, Value u, bool qkv_norm) override {
    const Value f = inner_.branch(k, u, qkv_norm);
    double s = vocab::eval_scalar(scale_, scale_.root, scalar_env(shape_, k));
    if (shape_.rules) s *= shape_.rules->branch_mult(k);  // the parametrization's branch multiplier
    return s == 1.0 ? f : inner_.scale(f, s);
  }

 private:
  StackOps& inner_;
  const StackShape& shape_;
  vocab::Expr scale_;
};

}  // namespace

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
  if (first == 0 && s.cfg.input_norm) x = ops.norm(x, norm_at(s, 0));
  if (first == 0) state.emb = x;
  // A segment rebuilt on its own tape (checkpoints, a block's probes) has no x_0 there to read.
  if (!state.emb.valid() && p.reads_embedding())
    throw std::invalid_argument("build_segment: the block reads emb (x_0), which this segment's tape lacks");
  out.stream.push_back(x);
  BranchScaledOps scaled(ops, s);
  for (int k = first; k < last; ++k) {
    x = p.sublayer(scaled, s, k, x, state);
    out.stream.push_back(x);
  }
  out.output = last == s.depth && applies_final_norm(s, p) ? ops.norm(x, final_norm_at(s)) : x;
  return out;
}

}  // namespace normsim::sim
