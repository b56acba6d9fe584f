#include "sim/sample_metrics.hpp"

#include <cmath>
#include <limits>

#include "sim/metrics.hpp"

namespace normsim::sim {

namespace {

constexpr int kGradMetric[kWeightKinds] = {metric::gradw_w1, metric::gradw_w2, metric::gradw_wgate,
                                           metric::gradw_wq, metric::gradw_wk, metric::gradw_wv,
                                           metric::gradw_wo};

// The first non-finite stream (K + 1: the output), or -1.
int first_bad_stream(const SampleScalars& s) {
  const int K = int(s.stream_finite.size()) - 1;
  for (int l = 0; l <= K; ++l)
    if (!s.stream_finite[l]) return l;
  return s.output_finite ? -1 : K + 1;
}

// Backward order, x_K down to x_0: the first non-finite gradient, or -1.
int first_bad_gradient(const SampleScalars& s) {
  for (int l = int(s.grad_finite.size()) - 1; l >= 0; --l)
    if (!s.grad_finite[l]) return l;
  return -1;
}

// Stores a computed value; one that is NaN or Inf is also reported (it never reaches a CSV file, so
// without this row it would vanish silently).
void store(SampleRecord& r, const SampleScalars& s, int metric, int layer) {
  const double value = s.values[metric][layer];
  r.values[metric][layer] = value;
  if (!std::isfinite(value)) r.nonfinite_statistics.push_back({metric, layer});
}

// The forward metrics of streams x_0..x_{end-1}; token_cos is undefined with one token and not stored.
void store_forward(SampleRecord& r, const SampleScalars& s, int forward_end, int tokens) {
  const int K = int(s.stream_finite.size()) - 1;
  for (int l = 0; l < forward_end && l <= K; ++l) {
    for (int m : {metric::act_sq, metric::act_mean_abs, metric::act_max_abs}) store(r, s, m, l);
    if (tokens > 1) store(r, s, metric::token_cos, l);
    store(r, s, metric::eff_rank, l);
  }
  for (int k = 0; k < K && k + 1 < forward_end; ++k) {
    store(r, s, metric::cos_next, k);
    store(r, s, metric::rel_update, k);
  }
  for (int k = 0; k < K && k < forward_end; ++k) store(r, s, metric::branch_sq, k);
}

// The stream metrics of x_0..x_{end-1} and the pair metrics they allow, into s.values.
void measure_forward(SampleScalars& s, const SampleTensors& t, int forward_end) {
  const int K = int(t.stream.size()) - 1;
  for (int l = 0; l < forward_end && l <= K; ++l) {
    const MatD& x = t.stream[l];
    s.values[metric::act_sq][l] = mean_square(x);
    s.values[metric::act_mean_abs][l] = mean_abs(x);
    s.values[metric::act_max_abs][l] = max_abs(x);
    s.values[metric::token_cos][l] = token_cosine(x);
    s.values[metric::eff_rank][l] = effective_rank(x);
  }
  for (int k = 0; k < K && k + 1 < forward_end; ++k) {
    s.values[metric::cos_next][k] = mean_token_cosine(t.stream[k], t.stream[k + 1]);
    s.values[metric::rel_update][k] = mean_relative_update(t.stream[k], t.stream[k + 1]);
  }
  for (int k = 0; k < K && k < forward_end; ++k) s.values[metric::branch_sq][k] = t.branch_sq[k];
}

}  // namespace

int gradw_metric(WeightKind w) {
  return kGradMetric[int(w)];
}

SampleScalars empty_scalars(int K) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SampleScalars s;
  s.values.assign(metric::count, {});
  for (int m = 0; m < metric::count; ++m)
    s.values[m].assign(metric_table()[m].index == MetricIndex::stream ? K + 1 : K, nan);
  s.stream_finite.assign(K + 1, true);
  s.grad_finite.assign(K + 1, true);
  return s;
}

SampleRecord record_from_scalars(int sample, const SampleScalars& s, const StackShape& shape) {
  const int K = int(s.stream_finite.size()) - 1;
  SampleRecord r;
  r.sample = sample;
  r.values = empty_scalars(K).values;
  // Forward: the first non-finite stream ends the forward metrics (everything after it derives from it).
  const int forward_bad = first_bad_stream(s);
  store_forward(r, s, forward_bad < 0 ? K + 1 : forward_bad, shape.tokens);
  if (forward_bad >= 0) {
    r.nonfinite = NonFinite{"forward", forward_bad};
    return r;
  }
  // Backward runs from x_K down to x_0: the first non-finite gradient in that order ends it.
  const int backward_bad = first_bad_gradient(s);
  for (int l = K; l > backward_bad; --l) store(r, s, metric::grad_sq, l);
  // Only the weights sublayer k has: the others hold NaN meaning "no such matrix".
  for (int k = K - 1; k >= 0 && k >= backward_bad; --k)
    for (WeightKind w : shape.weights(k)) store(r, s, kGradMetric[int(w)], k);
  if (backward_bad >= 0) r.nonfinite = NonFinite{"backward", backward_bad};
  return r;
}

SampleRecord measure_sample(int sample, const SampleTensors& t, const StackShape& shape) {
  const int K = int(t.stream.size()) - 1;
  SampleScalars s = empty_scalars(K);
  for (int l = 0; l <= K; ++l) s.stream_finite[l] = all_finite(t.stream[l]);
  s.output_finite = t.output_finite;
  const int forward_bad = first_bad_stream(s);
  measure_forward(s, t, forward_bad < 0 ? K + 1 : forward_bad);
  if (forward_bad >= 0) return record_from_scalars(sample, s, shape);
  for (int l = K; l >= 0; --l) {
    s.grad_finite[l] = all_finite(t.grad[l]);
    if (!s.grad_finite[l]) break;  // nothing below it is stored
    s.values[metric::grad_sq][l] = mean_square(t.grad[l]);
  }
  for (int k = 0; k < K; ++k)
    for (WeightKind w : shape.weights(k)) s.values[kGradMetric[int(w)]][k] = t.gradw[k][int(w)];
  return record_from_scalars(sample, s, shape);
}

}  // namespace normsim::sim
