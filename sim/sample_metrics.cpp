#include "sim/sample_metrics.hpp"

#include <cmath>
#include <limits>

#include "sim/metrics.hpp"

namespace normsim::sim {

namespace {

// Stores a computed value; one that is NaN or Inf is also reported (it never reaches a CSV file, so
// without this row it would vanish silently).
void store(SampleRecord& r, int metric, int layer, double value) {
  r.values[metric][layer] = value;
  if (!std::isfinite(value)) r.nonfinite_statistics.push_back({metric, layer});
}

// The forward metrics of streams x_0..x_{end-1}; token_cos is undefined with one token and not computed.
void measure_forward(SampleRecord& r, const SampleTensors& t, int forward_end) {
  const int K = int(t.stream.size()) - 1;
  for (int l = 0; l < forward_end && l <= K; ++l) {
    const MatD& x = t.stream[l];
    store(r, metric::act_sq, l, mean_square(x));
    store(r, metric::act_mean_abs, l, mean_abs(x));
    store(r, metric::act_max_abs, l, max_abs(x));
    if (x.rows() > 1) store(r, metric::token_cos, l, token_cosine(x));
    store(r, metric::eff_rank, l, effective_rank(x));
  }
  for (int k = 0; k < K && k + 1 < forward_end; ++k) {
    store(r, metric::cos_next, k, mean_token_cosine(t.stream[k], t.stream[k + 1]));
    store(r, metric::rel_update, k, mean_relative_update(t.stream[k], t.stream[k + 1]));
  }
  for (int k = 0; k < K && k < forward_end; ++k) store(r, metric::branch_sq, k, t.branch_sq[k]);
}

}  // namespace

SampleRecord measure_sample(int sample, const SampleTensors& t, const StackShape& shape) {
  const int K = int(t.stream.size()) - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SampleRecord r;
  r.sample = sample;
  r.values.assign(metric::count, {});
  for (int m = 0; m < metric::count; ++m)
    r.values[m].assign(metric_table()[m].index == MetricIndex::stream ? K + 1 : K, nan);

  // Forward: the first non-finite stream ends the forward metrics (everything after it derives from it).
  int forward_bad = -1;
  for (int l = 0; l <= K && forward_bad < 0; ++l)
    if (!all_finite(t.stream[l])) forward_bad = l;
  if (forward_bad < 0 && !t.output_finite) forward_bad = K + 1;
  measure_forward(r, t, forward_bad < 0 ? K + 1 : std::min(forward_bad, K + 1));
  // The updated pass is measured only from a finite first pass (simulate_sample_cpu leaves it empty
  // otherwise).
  for (std::size_t l = 0; forward_bad < 0 && l < t.output_change.size(); ++l)
    store(r, metric::output_change, int(l), t.output_change[l]);
  if (forward_bad >= 0) {
    r.nonfinite = NonFinite{"forward", forward_bad};
    return r;
  }

  // Backward runs from x_K down to x_0: the first non-finite gradient in that order ends it.
  int backward_bad = -1;
  for (int l = K; l >= 0 && backward_bad < 0; --l)
    if (!all_finite(t.grad[l])) backward_bad = l;
  for (int l = K; l > backward_bad; --l) store(r, metric::grad_sq, l, mean_square(t.grad[l]));
  static constexpr int kGradMetric[kWeightKinds] = {metric::gradw_w1, metric::gradw_w2, metric::gradw_wgate,
                                                    metric::gradw_wq, metric::gradw_wk, metric::gradw_wv,
                                                    metric::gradw_wo};
  // Only the weights sublayer k has: the others hold NaN meaning "no such matrix".
  for (int k = K - 1; k >= 0 && k >= backward_bad; --k)
    for (WeightKind w : shape.weights(k)) store(r, kGradMetric[int(w)], k, t.gradw[k][int(w)]);
  if (backward_bad >= 0) r.nonfinite = NonFinite{"backward", backward_bad};
  return r;
}

}  // namespace normsim::sim
