// Predicted exponents of a coordinate check (issue 28 item 4; docs/theory_notes.md "Coordinate checks"): how
// a quantity of a Pre-LN residual stack trained by Adam scales with width (m_N = width/base_width, depth
// fixed) or depth (m_L = depth/base_depth, width fixed) at step s, under a parametrization preset. Each row
// is cited: a statement of a source, or normsim's derivation from the sources' rules (labelled so; derived in
// docs/theory_notes.md). A quantity, preset or setting without a row gets a fit and no verdict.
//
// The agreement band is the one principle docs/claims.md uses for O(N) against O(log N): half way from the
// predicted exponent to the nearest different exponent another preset predicts for the same quantity, axis,
// layers and step, so that a verdict tells the presets apart and nothing finer. A growth whose exponent is
// an asymptote that finite sizes miss on one side or the other (`lower_bound`: the update competes with the
// init until it outgrows it) is judged only as a growth: the one-sided band [half way, +inf). Without another
// preset's prediction there is no band, and no verdict.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace normsim::theory {

enum class ScalingAxis { width, depth };

// Which layers a row speaks for: `any` index l (or k) and the layer mean; `first` the index 0 (x_0 or
// sublayer 0); `last` the last index (x_K or sublayer K-1), which a depth sweep moves.
enum class LayerGroup { any, first, last };

struct ExponentRow {
  ScalingAxis axis;
  std::string_view parametrization;  // a preset of `normsim list parametrizations`
  std::string_view metric;           // a metric of `normsim list metrics`
  LayerGroup layers;
  int first_step, last_step;  // the steps the row holds for; last_step -1: every later step
  double exponent;
  bool lower_bound;         // an asymptote only: judged as a growth, with a one-sided band
  std::string_view source;  // the source's file and line, or "normsim's derivation" and where it is
};

// The setting every row is derived for: Pre-LN (`placement = "pre"`), `update = "adam"`, a fixed or fresh
// batch, the loss on the stream (no embedding or readout matrix).
inline constexpr std::string_view kExponentPlacement = "pre";
inline constexpr std::string_view kExponentOptimizer = "adam";

std::span<const ExponentRow> exponent_rows();

struct ExponentQuery {
  ScalingAxis axis;
  std::string_view parametrization;
  std::string_view metric;
  LayerGroup layers;
  int step;
};

const ExponentRow* predicted_exponent(const ExponentQuery& query);

struct ExponentBand {
  double low, high;  // high may be +inf (a lower bound)
};
std::optional<ExponentBand> exponent_band(const ExponentQuery& query);

}  // namespace normsim::theory
