// Post-LN (Vaswani et al. 2017, arXiv 1706.03762 §3.1):   x_{k+1} = N(x_k + F_k(x_k))
#include "sim/placements/all.hpp"

namespace normsim::sim {
namespace {
class Post final : public Placement {
 public:
  vocab::Placement id() const override { return vocab::Placement::post; }
  std::string_view summary() const override { return "x' = N(x + F(x))  (Post-LN, Vaswani et al. 2017)"; }
  bool ends_in_norm(const StackShape&) const override { return true; }
  Value sublayer(StackOps& ops, const StackShape&, int k, Value x, PlacementState&) const override {
    return ops.norm(ops.add(x, ops.branch(k, x)));
  }
};
}  // namespace
const Placement& post_placement() {
  static const Post p;
  return p;
}
}  // namespace normsim::sim
