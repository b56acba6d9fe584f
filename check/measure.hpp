// Running a claim's simulations and reading, per sample, the values its statistic is computed from, next to
// the mean field's value of the same quantity (the theory evaluated on the very Config that ran).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "check/claim.hpp"
#include "sim/backend.hpp"
#include "sim/record.hpp"
#include "sim/results.hpp"

namespace normsim::check {

struct Measurement {
  // Per layer (x = layer index of the one config) or per config (x = the swept value, or the depth when
  // nothing is swept). Which one: per_layer().
  std::vector<double> x;
  std::vector<std::vector<double>> y;    // y[sample][point]; NaN where not finite or not defined
  std::vector<std::vector<double>> den;  // ratio claims: the denominator, same shape
  std::vector<std::optional<double>> meanfield, meanfield_den;  // per point; nullopt: no prediction
  std::vector<std::string> theory_notes;  // why the mean field has no value, where it has none
  sim::GridRecords records;               // every sample of every config, for summary.csv
};

// Whether the claim's points are the layers of one config (linear, powerlaw, profile and bound claims with
// no swept key) rather than one point per config.
bool per_layer(const ClaimSpec& claim);

// The metric names of "a", a product "a*b" or a quotient of products "a*b/c" (one '/').
std::vector<std::string> factors(const std::string& metric);
// Why a layer expression (pick's forms) cannot address a series of `size` entries, or "".
std::string layer_expr_problem(const std::string& expr, int size);

// One per-sample series of `metric` ("a" or a product "a*b" of metrics with the same index) from a record;
// throws ClaimError for an unknown metric.
std::vector<double> series(const sim::SampleRecord& record, const std::string& metric);
// The value a layer expression picks from a series: "first"/"last" (first/last finite entry), "max", "min",
// or an index (negative counts from the end). NaN when nothing finite is there.
double pick(const std::vector<double>& values, const std::string& expr);
// The indices a range "all" or "A:B" (B exclusive, either side may be empty or negative) selects.
std::vector<int> layer_range(int size, const std::string& range);

// Runs every config of the claim on `backend` and collects the points; with a [reference], each sample's
// statistic minus the reference's for the same sample (and the mean field's likewise).
Measurement measure(const ClaimSpec& claim, sim::Backend& backend);

// The same extraction on records already produced (tests feed synthetic ones), with the mean field computed
// for each config unless `with_theory` is false.
Measurement collect(const ClaimSpec& claim, const sim::GridRecords& records, bool with_theory = true);
// y[s][i] -= the statistic of reference[s]; the mean field of the reference subtracted from each point's.
// (measure() uses this for a single reference; a reference per x, ClaimSpec::reference_per_x, is
// subtracted point by point.)
void subtract_reference(const ClaimSpec& claim, const std::vector<sim::SampleRecord>& reference,
                        Measurement& m);

}  // namespace normsim::check
