// DeepNorm (Wang et al. 2022, DeepNet, arXiv 2203.00555 §4.1, §4.3):   x_{k+1} = N(alpha x_k + F_k(x_k)),
// with w1, wgate, w2, wv, wo initialized x beta (not wq, wk). In sublayers (K = 2N for N encoder layers):
// alpha = (2N)^(1/4) = K^(1/4), beta = (8N)^(-1/4) = (4K)^(-1/4), unless deepnorm_alpha/beta are given.
#include <cmath>

#include "sim/placements/all.hpp"

namespace normsim::sim {

double deepnorm_alpha(const StackShape& s) {
  return s.cfg.deepnorm_alpha > 0 ? s.cfg.deepnorm_alpha : std::pow(double(s.depth), 0.25);
}
double deepnorm_beta(const StackShape& s) {
  return s.cfg.deepnorm_beta > 0 ? s.cfg.deepnorm_beta : std::pow(4.0 * s.depth, -0.25);
}

namespace {
class DeepNorm final : public Placement {
 public:
  vocab::Placement id() const override { return vocab::Placement::deepnorm; }
  std::string_view summary() const override {
    return "x' = N(alpha x + F(x)), FFN/value/output weights x beta  (DeepNorm, Wang et al. 2022)";
  }
  bool ends_in_norm(const StackShape&) const override { return true; }
  double init_multiplier(const StackShape& s, WeightKind w) const override {
    return (w == WeightKind::wq || w == WeightKind::wk) ? 1.0 : deepnorm_beta(s);
  }
  Value sublayer(StackOps& ops, const StackShape& s, int k, Value x, PlacementState&) const override {
    return ops.norm(ops.add(ops.scale(x, deepnorm_alpha(s)), ops.branch(k, x)));
  }
};
}  // namespace
const Placement& deepnorm_placement() {
  static const DeepNorm p;
  return p;
}
}  // namespace normsim::sim
