// Claim evaluation (see evaluate.hpp).
#include "check/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "io/csv_write.hpp"
#include "stats/growth.hpp"

namespace normsim::check {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

double tx(bool log, double v) {
  return log ? std::log(v) : v;
}

// The slope of one series against x over the points where both are finite after the transforms.
double fit_slope(const ClaimSpec& c, const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> xs, ys;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    const double a = tx(c.log_x, x[i]), b = tx(c.log_y, y[i]);
    if (std::isfinite(a) && std::isfinite(b)) xs.push_back(a), ys.push_back(b);
  }
  return ols_slope(xs, ys);
}

std::vector<double> column(const std::vector<std::vector<double>>& y, std::size_t i) {
  std::vector<double> out;
  for (const auto& row : y)
    if (i < row.size() && std::isfinite(row[i])) out.push_back(row[i]);
  return out;
}

Band band_around(const ClaimSpec& c, std::optional<double> p) {
  Band b{-kInf, kInf};
  if (p) {
    const double tol = std::max(c.tolerance, c.rel_tolerance * std::abs(*p));
    b = {*p - tol, *p + tol};
  }
  if (c.has_lower) b.low = c.lower;
  if (c.has_upper) b.high = c.upper;
  return b;
}

void basic_data(const ClaimSpec& c, const Measurement& m, ClaimResult& r) {
  for (std::size_t i = 0; i < m.x.size(); ++i) {
    const Estimate e = mean_ci(column(m.y, i), c.confidence);
    r.data.push_back({m.x[i], e.value, std::isfinite(e.se) ? e.se : 0, m.meanfield[i]});
  }
}

void slope_fit(const ClaimSpec& c, const Measurement& m, ClaimResult& r) {
  // The figures' depth fits are this function too (stats/growth.hpp): one fit for claims and figures.
  const auto fit = stats::fit_lines(m.x, m.y, c.log_x, c.log_y, c.confidence);
  r.estimate = fit ? fit->slope : mean_ci({}, c.confidence);
  std::vector<double> mf;
  for (const auto& v : m.meanfield) mf.push_back(v ? *v : std::numeric_limits<double>::quiet_NaN());
  if (const double s = fit_slope(c, m.x, mf); std::isfinite(s)) r.meanfield = s;
  r.predicted = c.meanfield ? r.meanfield : c.predicted;
  basic_data(c, m, r);
  // A claim with its own slope draws that slope through the first measured point (the figure's legend names
  // it "predicted (slope)"); the mean field's slope, where one exists, is reported beside it in the table.
  // Otherwise the dashed curve is the mean field's.
  if (c.predicted && !c.meanfield && !r.data.empty()) {
    const DataPoint anchor = r.data.front();
    for (auto& d : r.data) {
      const double dx = tx(c.log_x, d.x) - tx(c.log_x, anchor.x);
      const double y = tx(c.log_y, anchor.measured) + *c.predicted * dx;
      d.predicted = c.log_y ? std::exp(y) : y;
    }
  }
}

// How badly one point fares, for picking the point a claim reports: a refuted point by how far out it lies,
// else an undecided one by the samples it needs, else a supported one by how close it comes to an edge.
double severity(const Decision& d, const Estimate& e, const Band& band) {
  if (d.verdict == Verdict::refuted) return 1e12 + std::max(band.low - e.high, e.low - band.high);
  if (d.verdict == Verdict::inconclusive) return 1e6 + static_cast<double>(d.samples_needed.value_or(0));
  return std::max(e.high - band.high, band.low - e.low);
}

// A point the claim covers that has no finite measurement leaves the claim undecided there: "at every x"
// cannot be supported with an x missing (a refutation elsewhere still stands). Named in the note.
void missing_points(const Measurement& m, const std::vector<std::size_t>& missing, ClaimResult& r) {
  if (missing.empty() || r.decision.verdict == Verdict::no_measurement) return;
  std::string xs;
  for (const std::size_t i : missing) xs += (xs.empty() ? "" : ", ") + io::format_number(m.x[i]);
  r.note += (r.note.empty() ? "" : " ") + std::string("No finite measurement at x = ") + xs + ".";
  if (r.decision.verdict != Verdict::refuted) r.decision = {Verdict::inconclusive, std::nullopt};
}

// Several decisions reported as one: the refuted point furthest out, else the undecided one needing the most
// samples, else the point closest to an edge. bands[i] is point i's band; covered[i] whether the claim
// speaks of point i (a profile only where the mean field predicts, a ratio only at its decide_at). Returns
// the reported point (r.estimate, r.band and r.decided_at are its), or nothing when none was measured.
std::optional<std::size_t> pointwise(const Measurement& m, ClaimResult& r,
                                     const std::vector<Estimate>& per_point, const std::vector<Band>& bands,
                                     const std::vector<bool>& covered) {
  r.decision = {Verdict::no_measurement, std::nullopt};
  double worst = -kInf;
  std::optional<std::size_t> reported;
  std::vector<std::size_t> missing;
  for (std::size_t i = 0; i < per_point.size(); ++i) {
    if (!covered[i]) continue;
    const Estimate& e = per_point[i];
    const Decision d = decide(e, bands[i]);
    if (d.verdict == Verdict::no_measurement) {
      missing.push_back(i);
      continue;
    }
    if (const double m_i = severity(d, e, bands[i]); m_i > worst)
      worst = m_i, reported = i, r.estimate = e, r.band = bands[i], r.decided_at = m.x[i];
    r.decision = combine(r.decision, d);
  }
  missing_points(m, missing, r);
  return reported;
}

// Per-sample log(y / denominator) at every x: the log ratio is closer to normal, and the interval comes back
// positive. Every point the statement covers is judged (the claim holds only where it holds at all of them),
// or the one x the source names (decide_at); the reported estimate is the deciding point's, as a ratio.
void ratio_fit(const ClaimSpec& c, const Measurement& m, ClaimResult& r) {
  const auto lg = [](double v) { return v > 0 ? std::log(v) : -kInf; };
  std::vector<Estimate> logs_at;
  std::vector<std::optional<double>> predicted_at, mf_at;
  std::vector<Band> log_bands;
  std::vector<bool> covered;
  for (std::size_t i = 0; i < m.x.size(); ++i) {
    std::vector<double> logs;
    for (std::size_t s = 0; s < m.y.size(); ++s)
      if (const double v = std::log(m.y[s][i] / m.den[s][i]); std::isfinite(v)) logs.push_back(v);
    logs_at.push_back(mean_ci(logs, c.confidence));
    std::optional<double> mf;
    if (m.meanfield[i] && m.meanfield_den[i]) mf = *m.meanfield[i] / *m.meanfield_den[i];
    mf_at.push_back(mf);
    predicted_at.push_back(c.meanfield ? mf : c.predicted);
    const Band band = band_around(c, predicted_at.back());
    log_bands.push_back({lg(band.low), lg(band.high)});
    covered.push_back(!c.decide_at || m.x[i] == *c.decide_at);
    const double ratio = std::exp(logs_at.back().value);
    const Estimate& e = logs_at.back();
    r.data.push_back({m.x[i], ratio, std::isfinite(e.se) ? ratio * e.se : 0, predicted_at.back()});
  }
  const auto i = pointwise(m, r, logs_at, log_bands, covered);
  if (!i) return;
  const Estimate& e = logs_at[*i];
  const double ratio = std::exp(e.value);
  r.estimate.value = ratio, r.estimate.low = std::exp(e.low), r.estimate.high = std::exp(e.high);
  r.estimate.se = ratio * e.se;
  r.meanfield = mf_at[*i], r.predicted = predicted_at[*i], r.band = band_around(c, predicted_at[*i]);
}

ClaimResult evaluate_band(const ClaimSpec& c, const Measurement& m);

}  // namespace

ClaimResult evaluate(const ClaimSpec& c, const Measurement& m) {
  ClaimResult r = evaluate_band(c, m);
  // A statement about trained models: what init gives is still reported, but the band is not judged; one on
  // unconfirmed equations is reported per setting, likewise unjudged.
  if (r.decision.verdict == Verdict::no_measurement) {  // nothing measured, whatever the claim says
    r.estimate = {std::numeric_limits<double>::quiet_NaN(), 0, 0, 0, std::numeric_limits<double>::quiet_NaN(),
                  std::numeric_limits<double>::quiet_NaN()};
    r.decided_at.reset();
    return r;
  }
  if (!c.testable_at_init && c.step == 0)  // a claim read at a training step is judged there
    r.decision = {Verdict::not_testable, std::nullopt};
  else if (!c.judged)
    r.decision = {Verdict::not_judged, std::nullopt};
  return r;
}

namespace {

ClaimResult evaluate_band(const ClaimSpec& c, const Measurement& m) {
  ClaimResult r;
  r.note = c.note;
  for (const auto& n : m.theory_notes) r.note += (r.note.empty() ? "" : " ") + n + ".";
  switch (c.fit) {
    case FitKind::linear:
    case FitKind::powerlaw: {
      slope_fit(c, m, r);
      r.band = band_around(c, r.predicted);
      r.decision = decide(r.estimate, r.band);
      return r;
    }
    case FitKind::ratio:
      ratio_fit(c, m, r);
      return r;
    case FitKind::bound: {
      basic_data(c, m, r);
      std::vector<Estimate> per_point;
      for (std::size_t i = 0; i < m.x.size(); ++i) per_point.push_back(mean_ci(column(m.y, i), c.confidence));
      r.predicted =
          c.predicted ? c.predicted : (c.has_upper ? std::optional(c.upper) : std::optional(c.lower));
      for (auto& d : r.data) d.predicted = r.predicted;
      const Band band = band_around(c, c.predicted);
      r.band = band;
      pointwise(m, r, per_point, std::vector<Band>(per_point.size(), band),
                std::vector<bool>(per_point.size(), true));
      double mx = -kInf;
      for (const auto& v : m.meanfield)
        if (v) mx = std::max(mx, *v);
      if (std::isfinite(mx)) r.meanfield = mx;
      return r;
    }
    case FitKind::profile: {
      basic_data(c, m, r);
      std::vector<Estimate> per_point;
      // An explicit lower/upper bounds y - meanfield itself (the sign of an approximation's bias).
      const bool absolute = !profile_band_is_relative(c);
      for (std::size_t i = 0; i < m.x.size(); ++i) {
        // An absolute tolerance compares y - meanfield (values near 0, such as cosines of independent
        // tokens); a relative one y / meanfield - 1.
        std::vector<double> dev;
        if (m.meanfield[i] && (absolute || *m.meanfield[i] != 0))
          for (double v : column(m.y, i))
            dev.push_back(absolute ? v - *m.meanfield[i] : v / *m.meanfield[i] - 1);
        per_point.push_back(mean_ci(dev, c.confidence));
      }
      r.predicted = 0.0;
      r.meanfield = 0.0;
      const double tol = absolute ? c.tolerance : c.rel_tolerance;
      Band band = tol > 0 || !(c.has_lower || c.has_upper) ? Band{-tol, tol} : Band{-kInf, kInf};
      if (c.has_lower) band.low = c.lower;
      if (c.has_upper) band.high = c.upper;
      std::vector<bool> covered;
      for (const auto& p : m.meanfield) covered.push_back(p.has_value());
      r.band = band;
      pointwise(m, r, per_point, std::vector<Band>(per_point.size(), band), covered);
      return r;
    }
    case FitKind::convergence: {
      // |bias(x)| = |E y(x) - meanfield(x)|; its exponent in x. Points without a prediction are left out.
      std::vector<std::vector<double>> groups;
      std::vector<double> xs, mf;
      for (std::size_t i = 0; i < m.x.size(); ++i)
        if (m.meanfield[i])
          groups.push_back(column(m.y, i)), xs.push_back(m.x[i]), mf.push_back(*m.meanfield[i]);
      const auto exponent = [&](const std::vector<std::vector<double>>& g) {
        std::vector<double> lx, ly;
        for (std::size_t i = 0; i < g.size(); ++i) {
          if (g[i].empty()) continue;
          double mean = 0;
          for (double v : g[i]) mean += v;
          mean /= g[i].size();
          lx.push_back(std::log(xs[i]));
          ly.push_back(std::log(std::abs(mean - mf[i])));
        }
        return ols_slope(lx, ly);
      };
      r.estimate = bootstrap(groups, exponent, 2000, 12345, c.confidence);
      r.predicted = c.predicted;
      r.band = band_around(c, r.predicted);
      r.decision = decide(r.estimate, r.band);
      for (std::size_t i = 0; i < xs.size(); ++i) {
        const Estimate e = mean_ci(groups[i], c.confidence);
        r.data.push_back({xs[i], std::abs(e.value - mf[i]), std::isfinite(e.se) ? e.se : 0, std::nullopt});
      }
      if (c.predicted && !r.data.empty())
        for (auto& d : r.data)
          d.predicted = r.data.front().measured * std::pow(d.x / r.data.front().x, *c.predicted);
      return r;
    }
  }
  return r;
}

}  // namespace

}  // namespace normsim::check
