// B2T connection (Takase et al. 2022, arXiv 2206.00330; takase/b2t_connection transformer_layer.py),
// on sublayer pairs (2j, 2j+1):
//   x_{2j+1} = N(x_{2j} + F_{2j}(x_{2j}));   x_{2j+2} = N(x_{2j+1} + F_{2j+1}(x_{2j+1}) + x_{2j})
#include "sim/placements/all.hpp"

namespace normsim::sim {
namespace {
class B2T final : public Placement {
 public:
  vocab::Placement id() const override { return vocab::Placement::b2t; }
  std::string_view summary() const override {
    return "Post-LN with a bottom-to-top residual over each sublayer pair  (B2T, Takase et al. 2022)";
  }
  int span() const override { return 2; }
  bool ends_in_norm(const StackShape&) const override { return true; }
  Value sublayer(StackOps& ops, const StackShape&, int k, Value x, PlacementState& state) const override {
    if (k % 2 == 0) {
      state.saved = x;
      return ops.norm(ops.add(x, ops.branch(k, x)));
    }
    return ops.norm(ops.add(ops.add(x, ops.branch(k, x)), state.saved));
  }
};
}  // namespace
const Placement& b2t_placement() {
  static const B2T p;
  return p;
}
}  // namespace normsim::sim
