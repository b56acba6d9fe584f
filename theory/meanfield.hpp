// Infinite-width mean-field profile of a residual stack at initialization, per layer, for every placement
// of docs/conventions.md. Tokens are exchangeable: the state is the token Gram (second moment, cross
// moment) of the stream forward and of the gradient backward (gradient-independence assumption).
// Attention is the uniform-attention value path (W_Q, W_K -> 0) of theory.md §1.2: an APPROXIMATION,
// since real softmax attention at Xavier init has logits of variance ~1 (theory.md §1.2).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "theory/stack_spec.hpp"

namespace normsim::theory {

// One value per layer or sublayer; nullopt where the theory has no controlled prediction.
using Series = std::vector<std::optional<double>>;

// The forward series of the stream, written once each: X(metric, index, prediction), with the metric's name
// (vocab/metrics.def; the profile's member and its row of series_table), its index (layer: l = 0..K;
// sublayer: k = 0..K-1) and its value at l from the moments m (ForwardMoments; nullopt: not predicted there).
// The profile is filled row by row at each l, in this order (a NaN or Inf is left out, noted in nonfinite).
#define NORMSIM_MEANFIELD_FORWARD(X)                                                \
  X(act_sq, layer, m.v)                                                             \
  X(token_cos, layer, m.cos)                                                        \
  X(cos_next, sublayer, m.cross / std::sqrt(m.v * m.vn))                            \
  X(rel_update, sublayer, std::sqrt(nonnegative(m.vn - 2.0 * m.cross + m.v) / m.v)) \
  X(branch_sq, sublayer, m.branch_sq)

// What the forward series read at layer l, at infinite width: per coordinate, of x_l, x_{l+1} and sublayer l
// between them (vn, cross and branch_sq are NaN at l = K, which has no sublayer).
struct ForwardMoments {
  double v;                   // E x_l^2, the token Gram's diagonal
  std::optional<double> cos;  // the token Gram's cosine off/diag; none with one token
  double vn;                  // E x_{l+1}^2
  double cross;               // E x_l x_{l+1} (the same token)
  double branch_sq;           // E F_l^2 (sublayer l's raw branch output)
};

struct MeanFieldProfile {
#define NORMSIM_MEANFIELD_MEMBER(metric, index, prediction) Series metric;
  NORMSIM_MEANFIELD_FORWARD(NORMSIM_MEANFIELD_MEMBER)
#undef NORMSIM_MEANFIELD_MEMBER
  // Layer-indexed, l = 0..K (metric definitions: docs/conventions.md "Metrics").
  Series grad_sq;
  Series jac_sq;  // mean squared singular value of dx_K/dx_l (theory/jacobian.hpp); any loss
  // Sublayer-indexed, k = 0..K-1. gradw_* only at MLP sublayers; gradw_wgate only for swiglu, gradw_wrouter
  // only for a routed MLP.
  Series gradw_w1, gradw_w2, gradw_wgate, gradw_wrouter;
  // Layer-indexed: output change under a random update (spec.random_update_scale > 0; empty otherwise), to
  // first order in the update, carried through the placement's expression (docs/theory_notes.md "Output
  // change under a random update").
  Series output_change;
  // Every entry the mean field tried to predict but got NaN or Inf (an overflow: the entry is left out of
  // its series, which holds no value there), so a caller can report where, as the simulator does.
  struct NonFinite {
    std::string_view metric;  // the metric's name (vocab/metrics.hpp; static storage)
    int index;                // l or k
  };
  std::vector<NonFinite> nonfinite;
  bool final_norm = false;           // whether the final norm was applied
  std::vector<std::string> caveats;  // the approximations this profile rests on, one line each

  // The series of a metric named in vocab/metrics.hpp, or nullptr when the metric is not predicted at all.
  const Series* metric(std::string_view name) const;
  // The metric name of one of this profile's series ("" for another pointer).
  std::string_view name_of(const Series* series) const;
};

MeanFieldProfile meanfield(const StackSpec& spec);  // throws std::invalid_argument on an invalid spec

}  // namespace normsim::theory
