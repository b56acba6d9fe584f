// No norm in the stack:   x_{k+1} = x_k + F_k(x_k), final N unless final_norm = false
#include "sim/placements/all.hpp"

namespace normsim::sim {
namespace {
class NoNorm final : public Placement {
 public:
  vocab::Placement id() const override { return vocab::Placement::none; }
  std::string_view summary() const override { return "x' = x + F(x), no norm in the stack"; }
  bool ends_in_norm(const StackShape&) const override { return false; }
  Value sublayer(StackOps& ops, const StackShape&, int k, Value x, PlacementState&) const override {
    return ops.add(x, ops.branch(k, x));
  }
};
}  // namespace
const Placement& none_placement() {
  static const NoNorm p;
  return p;
}
}  // namespace normsim::sim
