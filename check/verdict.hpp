// From an estimate and an agreement band to supported / refuted / inconclusive. The rule is an equivalence
// test: agreement must be shown, not merely "not excluded", so a wide interval never supports a claim.
//   supported:    the whole confidence interval lies inside the band;
//   refuted:      the whole interval lies outside the band;
//   inconclusive: it straddles an edge; then the samples that would decide it follow from the measured
//                 standard error (se shrinks like 1/sqrt(n)): n_needed = n (se / needed_se)^2;
//   not testable at init: the claim is about trained models (its claim file says so); the simulation still
//                 runs and its numbers are reported, but no band is judged;
//   no finite measurement: not one sample gave a finite statistic (a NaN stack, a block that divides by 0):
//                 nothing to judge, and `normsim check` exits 1 naming the claim;
//   not judged:   the statement rests on equations the sources were not reached for (its claim file says
//                 judged = false): every setting's result is reported, none decides.
// A claim of kind `reading` (normsim's reading of a source) words supported / refuted as consistent /
// inconsistent with that reading: it never speaks for the source.
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "stats/estimate.hpp"

namespace normsim::check {

// The statistics check's code reads unqualified (stats/ is shared with the figures).
using stats::bootstrap;
using stats::Estimate;
using stats::kConfidence;
using stats::mean_ci;
using stats::ols_slope;
using stats::t_quantile;

enum class Verdict { supported, refuted, inconclusive, not_testable, not_judged, no_measurement };
std::string_view to_string(Verdict v);
// The verdict as a report states it: to_string(v), or for a reading "consistent with normsim's reading" /
// "inconsistent with normsim's reading".
std::string verdict_words(Verdict v, bool reading);

struct Band {
  double low, high;  // may be -inf / +inf (one-sided claims)
};

struct Decision {
  Verdict verdict = Verdict::inconclusive;
  std::optional<long> samples_needed;  // inconclusive only, when the estimate is not on the band's edge
};

Decision decide(const Estimate& e, const Band& band);

// Several decisions about one claim (a bound or a profile at every x): refuted if any is refuted, supported
// if all are, inconclusive otherwise (needing the most samples any undecided one needs). A point with no
// finite measurement adds nothing; a claim none of whose points has one stays no_measurement.
Decision combine(const Decision& a, const Decision& b);

}  // namespace normsim::check
