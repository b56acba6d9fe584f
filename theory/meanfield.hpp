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

struct MeanFieldProfile {
  // Layer-indexed, l = 0..K (metric definitions: docs/conventions.md "Metrics").
  Series act_sq, grad_sq, token_cos;
  Series jac_sq;  // mean squared singular value of dx_K/dx_l (theory/jacobian.hpp); any loss
  // Sublayer-indexed, k = 0..K-1. gradw_* only at MLP sublayers; gradw_wgate only for swiglu, gradw_wrouter
  // only for a routed MLP.
  Series cos_next, rel_update, branch_sq, gradw_w1, gradw_w2, gradw_wgate, gradw_wrouter;
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
