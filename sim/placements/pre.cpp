// Pre-LN (Xiong et al. 2020, arXiv 2002.04745, Table 1):   x_{k+1} = x_k + F_k(N(x_k)), final N
#include "sim/placements/all.hpp"

namespace normsim::sim {
namespace {
class Pre final : public Placement {
 public:
  vocab::Placement id() const override { return vocab::Placement::pre; }
  std::string_view summary() const override {
    return "x' = x + F(N(x)), final N  (Pre-LN, Xiong et al. 2020)";
  }
  bool ends_in_norm(const StackShape&) const override { return false; }
  Value sublayer(StackOps& ops, const StackShape&, int k, Value x, PlacementState&) const override {
    return ops.add(x, ops.branch(k, ops.norm(x)));
  }
};
}  // namespace
const Placement& pre_placement() {
  static const Pre p;
  return p;
}
}  // namespace normsim::sim
