// Verdicts (see verdict.hpp).
#include "check/verdict.hpp"

#include <algorithm>
#include <cmath>

namespace normsim::check {

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::supported:
      return "supported";
    case Verdict::refuted:
      return "refuted";
    case Verdict::inconclusive:
      return "inconclusive";
    case Verdict::not_testable:
      return "not testable at init";
    case Verdict::not_judged:
      return "not judged (per-setting results)";
    case Verdict::no_measurement:
      return "no finite measurement";
  }
  return "?";
}

std::string verdict_words(Verdict v, bool reading) {
  if (reading && v == Verdict::supported) return "consistent with normsim's reading";
  if (reading && v == Verdict::refuted) return "inconsistent with normsim's reading";
  return std::string(to_string(v));
}

Decision decide(const Estimate& e, const Band& band) {
  Decision d;
  if (e.n == 0 || !std::isfinite(e.value)) return {Verdict::no_measurement, std::nullopt};
  if (e.low >= band.low && e.high <= band.high) {
    d.verdict = Verdict::supported;
    return d;
  }
  if (e.high < band.low || e.low > band.high) {
    d.verdict = Verdict::refuted;
    return d;
  }
  // Straddling: the half-width that would decide, either way, is the distance from the estimate to the
  // nearer edge it must clear (inside: to the nearer edge; outside: to the edge it lies beyond).
  const bool inside = e.value >= band.low && e.value <= band.high;
  const double needed_half = inside ? std::min(e.value - band.low, band.high - e.value)
                                    : (e.value < band.low ? band.low - e.value : e.value - band.high);
  if (needed_half > 0 && std::isfinite(e.se) && e.se > 0 && e.t > 0 && e.n > 0) {
    // The t multiplier shrinks a little as n grows; using today's keeps the estimate conservative.
    const double needed_se = needed_half / e.t;
    const double n = std::ceil(e.n * (e.se / needed_se) * (e.se / needed_se));
    if (n < 1e12) d.samples_needed = static_cast<long>(n);
  }
  return d;
}

Decision combine(const Decision& a, const Decision& b) {
  if (a.verdict == Verdict::no_measurement) return b;
  if (b.verdict == Verdict::no_measurement) return a;
  if (a.verdict == Verdict::refuted) return a;
  if (b.verdict == Verdict::refuted) return b;
  if (a.verdict == Verdict::supported) return b;
  if (b.verdict == Verdict::supported) return a;
  Decision d;
  if (a.samples_needed && b.samples_needed) d.samples_needed = std::max(*a.samples_needed, *b.samples_needed);
  return d;
}

}  // namespace normsim::check
