// Internal to theory/: the mean-field state a placement step reads and writes, and the few residual
// shapes that the placements share. A step maps x_k (and for paired placements x_{k+1}) forward, and
// records for the backward pass the linear maps from a later layer's gradient Gram to this layer's.
#pragma once
#include <cmath>
#include <vector>

#include "theory/branch_model.hpp"
#include "theory/stack_spec.hpp"
#include "theory/token_gram.hpp"

namespace normsim::theory::detail {

struct SublayerRecord {
  TokenGram branch_in;  // Gram of F_k's input
  Branch::Eval eval;    // F_k at that input (eval.out: its raw output)
  double cross = 0.0;   // x_k . x_{k+1} / d, per token
  int anchor = 0;       // grad(x_k) = back(grad(x_anchor))
  GramMap back;
  int anchor_f = 0;  // grad at F_k's raw output = to_branch(grad(x_anchor_f))
  GramMap to_branch;
};

struct StackContext {
  const StackSpec& spec;
  double gamma_sq;
  Branch mlp, attention;
  std::vector<TokenGram> x;         // l = 0..K
  std::vector<SublayerRecord> rec;  // k = 0..K-1
  double admin_omega_sq = 1.0;      // Admin's omega_k^2, accumulated in the forward pass

  const Branch& branch(int k) const {
    switch (spec.sublayer) {
      case SublayerKind::mlp:
        return mlp;
      case SublayerKind::attention:
        return attention;
      case SublayerKind::transformer:
        return k % 2 == 0 ? attention : mlp;
    }
    return mlp;
  }
};

// A norm puts every token on the sphere of radius gamma sqrt(d) and keeps cosines (theory.md §0).
inline TokenGram normalized(TokenGram in, double gamma_sq) {
  return {gamma_sq, gamma_sq * in.cos()};
}

// x_{k+1} = x_k + a F_k(c N(x_k)) (or c x_k when norm_in is false); a^2 = out_sq, c^2 = in_sq.
// Pre-LN backward: G^2 = 1 + chi / v [DERIVED, theory.md §2.2 P5], here with the scales carried through.
void residual_step(StackContext& ctx, int k, bool norm_in, double in_sq, double out_sq);

// x_{k+1} = N(alpha x_k + a F_k(u)), u = x_k or N(x_k); a^2 = out_sq.
// Post-LN backward: G^2 = (alpha^2 + chi) / (alpha^2 + q) [DERIVED, theory.md §2.1 P4, §2.8].
void normalized_sum_step(StackContext& ctx, int k, double alpha, bool norm_in, double out_sq);

// One step per placement (theory/placements/<name>.cpp); each returns the number of sublayers it mapped.
int step_post(StackContext& ctx, int k);
int step_pre(StackContext& ctx, int k);
int step_peri(StackContext& ctx, int k);
int step_mix(StackContext& ctx, int k);
int step_b2t(StackContext& ctx, int k);
int step_deepnorm(StackContext& ctx, int k);
int step_lnscale(StackContext& ctx, int k);
int step_admin(StackContext& ctx, int k);
int step_rezero(StackContext& ctx, int k);
int step_spannorm(StackContext& ctx, int k);
int step_hybridnorm(StackContext& ctx, int k);
int step_none(StackContext& ctx, int k);

}  // namespace normsim::theory::detail
