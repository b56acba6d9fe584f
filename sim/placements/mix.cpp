// Mix-LN (Li et al. 2024, arXiv 2412.13795): blocks b < floor(mix_fraction * L) are Post-LN,
//   x_{k+1} = N(x_k + F_k(x_k)); the rest are Pre-LN, x_{k+1} = x_k + F_k(N(x_k)); final N.
#include <cmath>

#include "sim/placements/all.hpp"

namespace normsim::sim {
namespace {
int post_blocks(const StackShape& s) {
  return int(std::floor(s.cfg.mix_fraction * s.blocks() + 1e-9));
}

class Mix final : public Placement {
 public:
  vocab::Placement id() const override { return vocab::Placement::mix; }
  std::string_view summary() const override {
    return "first floor(mix_fraction*L) blocks Post-LN, the rest Pre-LN  (Mix-LN, Li et al. 2024)";
  }
  bool ends_in_norm(const StackShape& s) const override { return post_blocks(s) >= s.blocks(); }
  Value sublayer(StackOps& ops, const StackShape& s, int k, Value x, PlacementState&) const override {
    if (s.block(k) < post_blocks(s)) return ops.norm(ops.add(x, ops.branch(k, x)));
    return ops.add(x, ops.branch(k, ops.norm(x)));
  }
};
}  // namespace
const Placement& mix_placement() {
  static const Mix p;
  return p;
}
}  // namespace normsim::sim
