// ReZero (Bachlechner et al. 2020, arXiv 2003.04887):   x_{k+1} = x_k + alpha F_k(x_k), alpha = rezero_alpha
// (0 at init: the stack is the identity and every branch weight gets a zero gradient).
#include "sim/placements/all.hpp"

namespace normsim::sim {
namespace {
class ReZero final : public Placement {
 public:
  vocab::Placement id() const override { return vocab::Placement::rezero; }
  std::string_view summary() const override {
    return "x' = x + alpha F(x), no norm, alpha = rezero_alpha  (ReZero, Bachlechner et al. 2020)";
  }
  bool ends_in_norm(const StackShape&) const override { return false; }
  Value sublayer(StackOps& ops, const StackShape& s, int k, Value x, PlacementState&) const override {
    return ops.add(x, ops.scale(ops.branch(k, x), s.cfg.rezero_alpha));
  }
};
}  // namespace
const Placement& rezero_placement() {
  static const ReZero p;
  return p;
}
}  // namespace normsim::sim
