// Peri-LN / Sandwich-LN (CogView arXiv 2105.13290; Peri-LN arXiv 2502.02732):
//   x_{k+1} = x_k + N(F_k(N(x_k))), final N
#include "sim/placements/all.hpp"

namespace normsim::sim {
namespace {
class Peri final : public Placement {
 public:
  vocab::Placement id() const override { return vocab::Placement::peri; }
  std::string_view summary() const override {
    return "x' = x + N(F(N(x))), final N  (Peri-LN / Sandwich-LN, Kim et al. 2025; Ding et al. 2021)";
  }
  bool ends_in_norm(const StackShape&) const override { return false; }
  Value sublayer(StackOps& ops, const StackShape&, int k, Value x, PlacementState&) const override {
    return ops.add(x, ops.norm(ops.branch(k, ops.norm(x))));
  }
};
}  // namespace
const Placement& peri_placement() {
  static const Peri p;
  return p;
}
}  // namespace normsim::sim
