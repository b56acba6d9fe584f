// SpanNorm (Wang et al. 2026, arXiv 2601.22580). Only the abstract is available; the equations below are
// normsim's reading of it ("a clean residual connection that spans the entire transformer block ...
// a PostNorm-style computation that normalizes the aggregated output"), NOT the paper's confirmed form.
// On sublayer pairs (2j, 2j+1), lambda = spannorm_lambda:
//   x_{2j+1} = x_{2j} + lambda F_{2j}(N(x_{2j}));   x_{2j+2} = N(x_{2j+1} + lambda F_{2j+1}(N(x_{2j+1})))
// i.e. x_{2j+2} = N(x_{2j} + lambda (F_{2j} + F_{2j+1})): one residual across the block, one norm after it.
#include "sim/placements/all.hpp"

namespace normsim::sim {
namespace {
class SpanNorm final : public Placement {
 public:
  vocab::Placement id() const override { return vocab::Placement::spannorm; }
  std::string_view summary() const override {
    return "x'' = N(x + lambda(F1(N x) + F2(N x'))), a residual spanning each sublayer pair "
           "(SpanNorm, Wang et al. 2026; equations unconfirmed)";
  }
  int span() const override { return 2; }
  bool ends_in_norm(const StackShape&) const override { return true; }
  Value sublayer(StackOps& ops, const StackShape& s, int k, Value x, PlacementState&) const override {
    const Value stream = ops.add(x, ops.scale(ops.branch(k, ops.norm(x)), s.cfg.spannorm_lambda));
    return k % 2 == 0 ? stream : ops.norm(stream);
  }
};
}  // namespace
const Placement& spannorm_placement() {
  static const SpanNorm p;
  return p;
}
}  // namespace normsim::sim
