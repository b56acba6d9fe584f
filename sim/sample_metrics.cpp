#include "sim/sample_metrics.hpp"

#include <cmath>
#include <limits>

#include "sim/metrics.hpp"

namespace normsim::sim {

namespace {

// Computes and stores a metric the config asks for; one that is NaN or Inf is also reported (it never
// reaches a CSV file, so without this row it would vanish silently).
struct Store {
  SampleRecord& r;
  const MetricSet& wanted;
  template <class F>
  void operator()(int metric, int layer, F&& compute) const {
    if (!wanted.contains(metric)) return;
    const double value = compute();
    r.values[metric][layer] = value;
    if (!std::isfinite(value)) r.nonfinite_statistics.push_back({metric, layer});
  }
};

// The forward metrics of streams x_0..x_{end-1}; token_cos is undefined with one token and not computed.
void measure_forward(const Store& store, const SampleTensors& t, int forward_end) {
  const int K = int(t.stream.size()) - 1;
  for (int l = 0; l < forward_end && l <= K; ++l) {
    const MatD& x = t.stream[l];
    store(metric::act_sq, l, [&] { return mean_square(x); });
    store(metric::act_mean_abs, l, [&] { return mean_abs(x); });
    store(metric::act_max_abs, l, [&] { return max_abs(x); });
    if (x.rows() > 1) store(metric::token_cos, l, [&] { return token_cosine(x); });
    store(metric::eff_rank, l, [&] { return effective_rank(x); });
  }
  for (int k = 0; k < K && k + 1 < forward_end; ++k) {
    store(metric::cos_next, k, [&] { return mean_token_cosine(t.stream[k], t.stream[k + 1]); });
    store(metric::rel_update, k, [&] { return mean_relative_update(t.stream[k], t.stream[k + 1]); });
  }
  for (int k = 0; k < K && k < forward_end; ++k) store(metric::branch_sq, k, [&] { return t.branch_sq[k]; });
}

// The Jacobian estimates, where they were measured (asked for, forward pass finite).
void measure_jacobians(const Store& store, const SampleTensors& t) {
  const auto put = [&store](int metric, const std::vector<double>& v) {
    for (std::size_t i = 0; i < v.size(); ++i) store(metric, int(i), [&] { return v[i]; });
  };
  put(metric::jac_sq, t.jac_sq);
  put(metric::jac_spread, t.jac_spread);
  put(metric::block_identity_dev, t.block_identity_dev);
}

}  // namespace

SampleRecord measure_sample(int sample, const SampleTensors& t, const StackShape& shape,
                            const MetricSet& wanted) {
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
  const Store store{r, wanted};
  measure_forward(store, t, forward_bad < 0 ? K + 1 : std::min(forward_bad, K + 1));
  if (forward_bad >= 0) {
    r.nonfinite = NonFinite{"forward", forward_bad};
    return r;
  }
  if (!wanted.any_of(MetricPass::backward)) return r;  // no backward metric asked: none was run

  // Backward runs from x_K down to x_0: the first non-finite gradient in that order ends it.
  int backward_bad = -1;
  for (int l = K; l >= 0 && backward_bad < 0; --l)
    if (!all_finite(t.grad[l])) backward_bad = l;
  for (int l = K; l > backward_bad; --l) store(metric::grad_sq, l, [&] { return mean_square(t.grad[l]); });
  static constexpr int kGradMetric[kWeightKinds] = {metric::gradw_w1, metric::gradw_w2, metric::gradw_wgate,
                                                    metric::gradw_wq, metric::gradw_wk, metric::gradw_wv,
                                                    metric::gradw_wo};
  // Only the weights sublayer k has: the others hold NaN meaning "no such matrix".
  for (int k = K - 1; k >= 0 && k >= backward_bad; --k)
    for (WeightKind w : shape.weights(k)) store(kGradMetric[int(w)], k, [&] { return t.gradw[k][int(w)]; });
  if (backward_bad >= 0) r.nonfinite = NonFinite{"backward", backward_bad};
  measure_jacobians(store, t);
  return r;
}

}  // namespace normsim::sim
