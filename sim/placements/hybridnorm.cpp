// HybridNorm (Zhuo et al. 2025, arXiv 2503.04598; BryceZhuo/HybridNorm config and README):
//   attention: x_{k+1} = x_k + Attn(x_k) with per-head RMSNorm on Q, K and V (x itself not normalized)
//   MLP:       x_{k+1} = N(x_k) + F_k(N(x_k))        (Post-Norm FFN: the residual carries the normalized x)
// final N.
#include "sim/placements/all.hpp"

namespace normsim::sim {
namespace {
class HybridNorm final : public Placement {
 public:
  vocab::Placement id() const override { return vocab::Placement::hybridnorm; }
  std::string_view summary() const override {
    return "QKV-norm attention x' = x + Attn(x); FFN x' = N(x) + F(N(x))  (HybridNorm, Zhuo et al. 2025)";
  }
  bool ends_in_norm(const StackShape&) const override { return false; }
  Value sublayer(StackOps& ops, const StackShape& s, int k, Value x, PlacementState&) const override {
    if (s.branch(k) == BranchKind::attention) return ops.add(x, ops.branch(k, x, /*qkv_norm=*/true));
    const Value u = ops.norm(x);
    return ops.add(u, ops.branch(k, u));
  }
};
}  // namespace
const Placement& hybridnorm_placement() {
  static const HybridNorm p;
  return p;
}
}  // namespace normsim::sim
