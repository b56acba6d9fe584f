// The predicted exponents of a coordinate check as data (see scaling_exponents.hpp; derivations in
// docs/theory_notes.md "Coordinate checks").
#include "theory/scaling_exponents.hpp"

#include <cmath>
#include <limits>

namespace normsim::theory {

namespace {

constexpr auto W = ScalingAxis::width;
constexpr auto D = ScalingAxis::depth;
constexpr auto any = LayerGroup::any;
constexpr auto first = LayerGroup::first;
constexpr auto last = LayerGroup::last;

constexpr std::string_view kInit =
    "normsim's derivation: a fan-in init keeps every coordinate's distribution width-independent at step 0 "
    "(the mean field has no d: docs/theory.md 1.1)";
constexpr std::string_view kMupFlat =
    "microsoft/mup @1981497 README.md l.184-185 (muP, Adam: \"all curves stay horizontal\"); mup/optim.py "
    "l.69-77 (Adam LR / width_mult)";
constexpr std::string_view kSpExplodes =
    "microsoft/mup @1981497 README.md l.180-182 (SP, Adam: \"after 1 step of update, activation/output `l1` "
    "are exploding with width\"); the exponent is normsim's derivation from README l.274-278 (an Adam update "
    "is an outer product with entries +-lr: Theta(n) coordinates on a Theta(1) vector), reached once the "
    "update outgrows the init";
constexpr std::string_view kBranchMult =
    "EleutherAI/nanoGPT-mup (completep @6f8bc3b) model.py l.113, 117-118 (branch x m_L^-alpha, alpha = 1/2 "
    "depth-muP, 1 CompleteP); normsim's derivation: rel_update at k = 0 is m_L^-alpha |F_0|/|x_0|, both "
    "depth-independent under Pre-LN";
constexpr std::string_view kDepthStream =
    "normsim's derivation from nanoGPT-mup model.py l.113: Pre-LN v_K = v_0 + c sum_k mult_k^2 "
    "(docs/theory.md "
    "3(a)) = v_0 + c K without a multiplier, v_0 + c base_depth at alpha = 1/2, v_0 + c base_depth^2/K at 1";
constexpr std::string_view kDepthUpdate =
    "normsim's derivation from nanoGPT-mup model.py l.113 and l.331-335 (Adam LR m_L^(alpha-1)): each block "
    "moves x_K by lr/m_L in the loss's direction, K blocks by O(1); without the rules by lr K against "
    "|x_K|^2 ~ K";
constexpr std::string_view kFirstAdamStep =
    "normsim's derivation from microsoft/mup @1981497 README.md l.274-278 and mup/optim.py l.69-77: Adam's "
    "first step is dW = -lr sign(G) (m/sqrt(v) = +-1 for eps << |g|), G = sum_t x_t delta_t^T correlated "
    "with "
    "each x_t, so at a fixed token count (x_t dW)_j sums n terms of one sign bias: Theta(lr n); and ||dW||_F "
    "/ ||W_0||_F = lr sqrt(n_in n_out) / sqrt(n_out) = Theta(lr "
    "sqrt(n)); SP keeps lr, muP divides it by width_mult: exponents 1 and 0 (dwx), 1/2 and -1/2 (rel_dw); "
    "written before these metrics' first coordinate check";

// Width: sp and mup (Adam). The act/branch quantities are sizes, output_change a squared relative change.
constexpr ExponentRow kRows[] = {
    {W, "sp", "act_sq", any, 0, 0, 0, false, kInit},
    {W, "mup", "act_sq", any, 0, 0, 0, false, kInit},
    {W, "sp", "act_mean_abs", any, 0, 0, 0, false, kInit},
    {W, "mup", "act_mean_abs", any, 0, 0, 0, false, kInit},
    {W, "sp", "branch_sq", any, 0, 0, 0, false, kInit},
    {W, "mup", "branch_sq", any, 0, 0, 0, false, kInit},
    {W, "sp", "rel_update", any, 0, 0, 0, false, kInit},
    {W, "mup", "rel_update", any, 0, 0, 0, false, kInit},
    {W, "mup", "act_sq", any, 1, -1, 0, false, kMupFlat},
    {W, "sp", "act_sq", any, 1, -1, 2, true, kSpExplodes},
    {W, "mup", "act_mean_abs", any, 1, -1, 0, false, kMupFlat},
    {W, "sp", "act_mean_abs", any, 1, -1, 1, true, kSpExplodes},
    {W, "mup", "branch_sq", any, 1, -1, 0, false, kMupFlat},
    // SP's branch at step 1 only: the power count is of the first update, and no source speaks of the
    // branch; after it (coord_width.toml, steps 2-3) the middle branches grew as width^0.17-0.74.
    {W, "sp", "branch_sq", any, 1, 1, 2, true, kSpExplodes},
    {W, "mup", "output_change", any, 1, -1, 0, false, kMupFlat},
    {W, "sp", "output_change", any, 1, -1, 2, true, kSpExplodes},
    // The matrices' own update at the first step, where Adam's step is exactly a sign pattern.
    {W, "sp", "dwx_w1", any, 1, 1, 1, false, kFirstAdamStep},
    {W, "mup", "dwx_w1", any, 1, 1, 0, false, kFirstAdamStep},
    {W, "sp", "dwx_w2", any, 1, 1, 1, false, kFirstAdamStep},
    {W, "mup", "dwx_w2", any, 1, 1, 0, false, kFirstAdamStep},
    {W, "sp", "rel_dw_w1", any, 1, 1, 0.5, false, kFirstAdamStep},
    {W, "mup", "rel_dw_w1", any, 1, 1, -0.5, false, kFirstAdamStep},
    {W, "sp", "rel_dw_w2", any, 1, 1, 0.5, false, kFirstAdamStep},
    {W, "mup", "rel_dw_w2", any, 1, 1, -0.5, false, kFirstAdamStep},
    // Depth: sp (no rule in depth), depth_mup (alpha = 1/2), completep (alpha = 1), width fixed.
    {D, "sp", "rel_update", first, 0, -1, 0, false, kBranchMult},
    // depth_mup at step 0 only: F_0's own Adam step, lr m_L^-1/2, moves |F_0| by a depth-dependent amount
    // (gone only as L -> inf), so after a step the exponent at finite depth is no longer -1/2 (measured
    // -0.68, -0.77 at steps 1, 2 over depths 4-32, lr 0.01: docs/theory_notes.md).
    {D, "depth_mup", "rel_update", first, 0, 0, -0.5, false, kBranchMult},
    {D, "completep", "rel_update", first, 0, -1, -1, false, kBranchMult},
    {D, "sp", "act_sq", last, 0, 0, 1, false, kDepthStream},
    {D, "depth_mup", "act_sq", last, 0, 0, 0, false, kDepthStream},
    {D, "completep", "act_sq", last, 0, 0, 0, false, kDepthStream},
    {D, "sp", "act_mean_abs", last, 0, 0, 0.5, false, kDepthStream},
    {D, "depth_mup", "act_mean_abs", last, 0, 0, 0, false, kDepthStream},
    {D, "completep", "act_mean_abs", last, 0, 0, 0, false, kDepthStream},
    {D, "sp", "output_change", last, 1, -1, 1, true, kDepthUpdate},
    {D, "depth_mup", "output_change", last, 1, -1, 0, false, kDepthUpdate},
    {D, "completep", "output_change", last, 1, -1, 0, false, kDepthUpdate},
};

bool holds(const ExponentRow& r, const ExponentQuery& q) {
  return r.axis == q.axis && r.metric == q.metric && r.layers == q.layers && q.step >= r.first_step &&
         (r.last_step < 0 || q.step <= r.last_step);
}

}  // namespace

std::span<const ExponentRow> exponent_rows() {
  return kRows;
}

const ExponentRow* predicted_exponent(const ExponentQuery& query) {
  for (const auto& r : kRows)
    if (r.parametrization == query.parametrization && holds(r, query)) return &r;
  return nullptr;
}

std::optional<ExponentBand> exponent_band(const ExponentQuery& query) {
  const ExponentRow* own = predicted_exponent(query);
  if (!own) return std::nullopt;
  double nearest = std::numeric_limits<double>::infinity();
  for (const auto& r : kRows)
    if (r.parametrization != own->parametrization && holds(r, query) && r.exponent != own->exponent)
      nearest = std::min(nearest, std::abs(r.exponent - own->exponent));
  if (!std::isfinite(nearest)) return std::nullopt;
  const double half = nearest / 2;
  if (own->lower_bound) return ExponentBand{own->exponent - half, std::numeric_limits<double>::infinity()};
  return ExponentBand{own->exponent - half, own->exponent + half};
}

}  // namespace normsim::theory
