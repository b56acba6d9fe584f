// The two residual shapes most placements are made of. Cross terms between the stream and a branch
// output vanish in expectation because the branch's last weight matrix is zero-mean and independent of
// the stream (theory.md §3(a) Proposition A); a norm's backward map is gamma^2 / (v + eps) on both Gram
// entries (theory.md §0, infinite width; docs/theory_notes.md §eps).
#include <cmath>

#include "theory/placements/context.hpp"

namespace normsim::theory::detail {

void residual_step(StackContext& ctx, int k, bool norm_in, double in_sq, double out_sq) {
  const TokenGram x = ctx.x(k);
  const TokenGram u = in_sq * (norm_in ? normalized(x, ctx.gamma_sq, ctx.eps) : x);
  const Branch& f = ctx.branch(k);
  const Branch::Eval e = f.evaluate(u);
  const TokenGram out = e.out;
  ctx.x(k + 1) = x + out_sq * out;
  const double chain = out_sq * in_sq * (norm_in ? norm_jacobian(ctx.gamma_sq, x.diag, ctx.eps) : 1.0);
  SublayerRecord& r = ctx.rec(k);
  r.set_branch(u, e);
  r.cross = x.diag;
  r.anchor = k + 1, r.back = GramMap::identity() + chain * e.back;
  r.anchor_f = k + 1, r.to_branch = out_sq;
}

void normalized_sum_step(StackContext& ctx, int k, double alpha, bool norm_in, double out_sq) {
  const TokenGram x = ctx.x(k);
  const TokenGram u = norm_in ? normalized(x, ctx.gamma_sq, ctx.eps) : x;
  const Branch& f = ctx.branch(k);
  const Branch::Eval e = f.evaluate(u);
  const TokenGram out = e.out;
  const TokenGram h = (alpha * alpha) * x + out_sq * out;
  ctx.x(k + 1) = normalized(h, ctx.gamma_sq, ctx.eps);
  const double jac = norm_jacobian(ctx.gamma_sq, h.diag, ctx.eps);  // the norm's backward map
  const double chain = out_sq * (norm_in ? norm_jacobian(ctx.gamma_sq, x.diag, ctx.eps) : 1.0);
  SublayerRecord& r = ctx.rec(k);
  r.set_branch(u, e);
  r.cross = std::sqrt(ctx.gamma_sq) * alpha * x.diag / std::sqrt(h.diag + ctx.eps);
  r.anchor = k + 1, r.back = jac * (GramMap::scale(alpha * alpha) + chain * e.back);
  r.anchor_f = k + 1, r.to_branch = out_sq * jac;
}

}  // namespace normsim::theory::detail
