// A coordinate check's files, OUT/coord/{fits,verdicts,lines}.csv, and its one-line summary (see coord.hpp).
#include <cmath>
#include <map>
#include <sstream>

#include "check/coord.hpp"
#include "io/atomic_file.hpp"
#include "io/csv_write.hpp"

namespace normsim::check {

namespace {

std::string number(std::optional<double> v) {
  return v ? io::format_number(*v) : "";
}

// check's words, but a fit without a band is not a claim's per-setting result.
std::string_view verdict_text(Verdict v) {
  return v == Verdict::not_judged ? "not judged (no band)" : to_string(v);
}

std::string needed(const Decision& d) {
  return d.samples_needed ? std::to_string(*d.samples_needed) : "";
}

std::string fits_csv(const CoordResult& r) {
  std::ostringstream os;
  os << "swept,setting,parametrization,metric,layers,step,exponent,low,high,se,n,predicted,band_low,band_"
        "high,"
        "verdict,samples_needed,source\n";
  for (const auto& f : r.fits) {
    const auto& e = f.exponent;
    os << r.key << "," << io::csv_field(f.setting) << "," << io::csv_field(f.parametrization) << ","
       << f.metric << "," << f.layers << "," << f.step << ","
       << number(e ? e->value : std::optional<double>{}) << ","
       << number(e ? e->low : std::optional<double>{}) << "," << number(e ? e->high : std::optional<double>{})
       << "," << number(e ? e->se : std::optional<double>{}) << "," << (e ? e->n : 0) << ","
       << number(f.predicted) << "," << number(f.band ? f.band->low : std::optional<double>{}) << ","
       << number(f.band ? f.band->high : std::optional<double>{}) << "," << verdict_text(f.decision.verdict)
       << "," << needed(f.decision) << "," << io::csv_field(f.source) << "\n";
  }
  return os.str();
}

struct Tally {
  std::string parametrization;
  int judged = 0, supported = 0, refuted = 0;
  std::optional<Decision> combined;
};

// Per setting and metric: the fits that have a band, their verdicts combined as a claim's points are
// (verdict.hpp: refuted if any is, supported if all are).
std::map<std::pair<std::string, std::string>, Tally> tallies(const CoordResult& r) {
  std::map<std::pair<std::string, std::string>, Tally> out;
  for (const auto& f : r.fits) {
    if (!f.band || !f.exponent) continue;
    Tally& t = out[{f.setting, f.metric}];
    t.parametrization = f.parametrization;
    ++t.judged;
    t.supported += f.decision.verdict == Verdict::supported;
    t.refuted += f.decision.verdict == Verdict::refuted;
    t.combined = t.combined ? combine(*t.combined, f.decision) : f.decision;
  }
  return out;
}

std::string verdicts_csv(const CoordResult& r) {
  std::ostringstream os;
  os << "swept,setting,parametrization,metric,fits,supported,refuted,inconclusive,verdict,samples_needed\n";
  for (const auto& [which, t] : tallies(r))
    os << r.key << "," << io::csv_field(which.first) << "," << io::csv_field(t.parametrization) << ","
       << which.second << "," << t.judged << "," << t.supported << "," << t.refuted << ","
       << t.judged - t.supported - t.refuted << "," << to_string(t.combined->verdict) << ","
       << needed(*t.combined) << "\n";
  return os.str();
}

std::string lines_csv(const CoordResult& r) {
  std::ostringstream os;
  os << "swept,setting,metric," << r.key << ",step,mean,se,n\n";
  for (const auto& l : r.lines)
    os << r.key << "," << io::csv_field(l.setting) << "," << l.metric << "," << io::format_number(l.swept)
       << "," << l.step << "," << io::format_number(l.value.value) << "," << io::format_number(l.value.se)
       << "," << l.value.n << "\n";
  return os.str();
}

}  // namespace

void write_coord(const std::filesystem::path& out, const CoordResult& result) {
  const auto dir = out / "coord";
  std::filesystem::create_directories(dir);
  io::write_file_atomic(dir / "fits.csv", fits_csv(result));
  io::write_file_atomic(dir / "verdicts.csv", verdicts_csv(result));
  io::write_file_atomic(dir / "lines.csv", lines_csv(result));
}

std::string coord_summary(const CoordResult& result) {
  int supported = 0, refuted = 0, other = 0;
  for (const auto& [which, t] : tallies(result)) {
    const Verdict v = t.combined->verdict;
    (v == Verdict::supported ? supported : v == Verdict::refuted ? refuted : other) += 1;
  }
  return std::to_string(result.fits.size()) + " exponents fitted against " + result.key + "; " +
         std::to_string(supported + refuted + other) +
         " quantities with a predicted exponent: " + std::to_string(supported) + " supported, " +
         std::to_string(refuted) + " refuted, " + std::to_string(other) + " inconclusive";
}

}  // namespace normsim::check
