// Running a claim's simulations and reading, per sample, the values its statistic is computed from, next to
// the mean field's value of the same quantity (the theory evaluated on the very Config that ran).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "check/claim.hpp"
#include "sim/backend.hpp"
#include "sim/record.hpp"
#include "sim/run/results.hpp"

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
  std::vector<double> config_seconds;  // per config: its simulation's wall time (the bridge's, for [torch])
  std::string backend, device;         // what computed it (Backend::name() and device(), or the bridge)
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
// `layer_span` is the number of sublayers in a layer of the record's stack (layer_span(config)), which the
// derived metric gradw_layer reads.
std::vector<double> series(const sim::SampleRecord& record, const std::string& metric, int layer_span = 1);

// gradw_layer, a metric of claims only: at sublayer k, the Frobenius norm of the loss's gradient with respect
// to every weight matrix of the layer that holds k (a transformer layer: its attention and MLP sublayers; a
// decoder layer: its three; otherwise the sublayer alone), sqrt(sum of the gradw_* squared). It is the
// per-layer gradient norm papers plot ("the gradient norm of each layer"), covering all the layer's
// parameters, not one matrix. No mean field.
inline constexpr std::string_view kLayerGradient = "gradw_layer";
// Sublayers per layer: 2 on a transformer, 3 on a decoder, else 1.
int layer_span(const sim::Config& config);
// The metric ids gradw_layer is made of (every gradw_*).
std::vector<int> gradient_metrics();
// The value a layer expression picks from a series: "first"/"last" (first/last finite entry), "max", "min",
// or an index (negative counts from the end). NaN when nothing finite is there.
double pick(const std::vector<double>& values, const std::string& expr);
// The indices a range "all" or "A:B" (B exclusive, either side may be empty or negative) selects.
std::vector<int> layer_range(int size, const std::string& range);

// The x of config i of a claim's sweep: its depth when x is the layer, else the swept key's value (a string
// key, such as placement, by position i).
double x_of(const ClaimSpec& claim, const sim::Config& config, std::size_t i);

// The records of training step `step` (SampleRecord::step), in their order: one per sample.
std::vector<sim::SampleRecord> at_step(std::vector<sim::SampleRecord> records, int step);

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
