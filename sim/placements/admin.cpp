// Admin (Liu et al. 2020, arXiv 2004.08249; LiyuanLucasLiu/Transformer-Clinic transformer_layer.py):
//   x_{k+1} = N(omega_k x_k + F_k(x_k)),  omega_0 = 1,  omega_k^2 = omega_{k-1}^2 + mean(F_{k-1}(x_{k-1})^2)
// The code's profiling pass sets omega_i^2 = Var[x_{i-2} omega_{i-1}] + Var[f_{i-1}] with unit-variance LN
// outputs; here the profiling runs on the sample's own weights and input, in the same forward pass, and
// omega is a constant of the backward pass (as after profiling).
#include <cmath>

#include "sim/norm_site.hpp"
#include "sim/placements/all.hpp"

namespace normsim::sim {
namespace {
class Admin final : public Placement {
 public:
  vocab::Placement id() const override { return vocab::Placement::admin; }
  std::string_view summary() const override {
    return "built-in code, not an expression: x' = N(omega x + F(x)), omega^2 = 1 + sum of earlier branch "
           "variances, measured  (Admin, Liu et al. 2020)";
  }
  bool ends_in_norm(const StackShape&) const override { return true; }
  Value sublayer(StackOps& ops, const StackShape& s, int k, Value x, PlacementState& state) const override {
    if (state.omega_sq.empty()) state.omega_sq.assign(ops.batch(), 1.0);
    if (state.replay)
      state.omega_sq = state.omega_sq_used.at(k);
    else
      state.omega_sq_used.push_back(state.omega_sq);
    const Value f = ops.branch(k, x);
    Scalars omega(state.omega_sq.size());
    for (std::size_t i = 0; i < omega.size(); ++i) omega[i] = std::sqrt(state.omega_sq[i]);
    const Value out = ops.norm(ops.add(ops.scale(x, omega), f), norm_at(s, k));
    const Scalars var_f = ops.mean_sq(f);
    for (std::size_t i = 0; i < omega.size(); ++i) state.omega_sq[i] += var_f[i];
    return out;
  }
};
}  // namespace
const Placement& admin_placement() {
  static const Admin p;
  return p;
}
}  // namespace normsim::sim
