#include "sim/stack_build.hpp"

namespace normsim::sim {

bool applies_final_norm(const StackShape& s, const Placement& p) {
  if (s.cfg.final_norm == vocab::FinalNorm::always) return true;
  if (s.cfg.final_norm == vocab::FinalNorm::never) return false;
  return !p.ends_in_norm(s);
}

StackValues build_stack(StackOps& ops, const StackShape& s, const Placement& p, Value input,
                        PlacementState* state_io) {
  StackValues out;
  out.stream.reserve(s.depth + 1);
  Value x = s.cfg.input_norm ? ops.norm(input) : input;
  out.stream.push_back(x);
  PlacementState local;
  PlacementState& state = state_io ? *state_io : local;
  state.saved = Value{};
  state.omega_sq.clear();
  // A fresh (non-replay) build records Admin's omega anew; without this a reused state would keep the
  // previous build's values in front and a later replay would read stale ones.
  if (!state.replay) state.omega_sq_used.clear();
  for (int k = 0; k < s.depth; ++k) {
    x = p.sublayer(ops, s, k, x, state);
    out.stream.push_back(x);
  }
  out.output = applies_final_norm(s, p) ? ops.norm(x) : x;
  return out;
}

}  // namespace normsim::sim
