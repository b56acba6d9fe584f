// LayerNorm Scaling (Sun et al. 2025, "The Curse of Depth", arXiv 2502.05795 Eq. 12):
//   x_{k+1} = x_k + F_k(N(x_k) / sqrt(b(k)+1)), final N   (b(k)+1 the 1-based block index)
#include <cmath>

#include "sim/placements/all.hpp"

namespace normsim::sim {
namespace {
class LnScale final : public Placement {
 public:
  vocab::Placement id() const override { return vocab::Placement::lnscale; }
  std::string_view summary() const override {
    return "x' = x + F(N(x)/sqrt(layer)), final N  (LayerNorm Scaling, Sun et al. 2025)";
  }
  bool ends_in_norm(const StackShape&) const override { return false; }
  Value sublayer(StackOps& ops, const StackShape& s, int k, Value x, PlacementState&) const override {
    return ops.add(x, ops.branch(k, ops.scale(ops.norm(x), 1.0 / std::sqrt(double(s.block(k) + 1)))));
  }
};
}  // namespace
const Placement& lnscale_placement() {
  static const LnScale p;
  return p;
}
}  // namespace normsim::sim
