// Where a norm sits (see norm_site.hpp).
#include "sim/norm_site.hpp"

#include "sim/placements/expression.hpp"
#include "vocab/block_eval.hpp"

namespace normsim::sim {

NormAt norm_at(const StackShape& s, int k) {
  if (!vocab::is_pointwise(s.norm)) return {};
  const vocab::ScalarEnv env = scalar_env(s, k);
  const vocab::Expr alpha = vocab::parse_scalar(s.cfg.norm_alpha),
                    shift = vocab::parse_scalar(s.cfg.norm_shift);
  return {vocab::eval_scalar(alpha, alpha.root, env), vocab::eval_scalar(shift, shift.root, env)};
}

NormAt final_norm_at(const StackShape& s) {
  return {s.cfg.final_norm_alpha, s.cfg.final_norm_shift};
}

}  // namespace normsim::sim
