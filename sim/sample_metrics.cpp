#include "sim/sample_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/edges.hpp"
#include "sim/lane_metrics.hpp"
#include "sim/metrics.hpp"
#include "sim/parametrization.hpp"
#include "sim/stream_fields.hpp"
#include "sim/thread_split.hpp"

namespace normsim::sim {

namespace {

// Each kind's metrics, from its row of vocab/weight_kinds.hpp: gradw_<kind>, and the coordinate-check metrics
// of a step's update (sim/update_probe.hpp), -1 where it has none.
namespace weight_metric {
inline constexpr int none = -1;
using namespace vocab::metric;
}  // namespace weight_metric
constexpr int kGradMetric[kWeightKinds] = {
#define NORMSIM_WEIGHT_KIND_GRADW(kind, ...) weight_metric::gradw_##kind,
    NORMSIM_WEIGHT_KINDS(NORMSIM_WEIGHT_KIND_GRADW)
#undef NORMSIM_WEIGHT_KIND_GRADW
};
constexpr int kDwxMetric[kWeightKinds] = {
#define NORMSIM_WEIGHT_KIND_DWX(kind, init_key, writes_stream, biased, dwx, rel_dw) weight_metric::dwx,
    NORMSIM_WEIGHT_KINDS(NORMSIM_WEIGHT_KIND_DWX)
#undef NORMSIM_WEIGHT_KIND_DWX
};
constexpr int kRelDwMetric[kWeightKinds] = {
#define NORMSIM_WEIGHT_KIND_REL_DW(kind, init_key, writes_stream, biased, dwx, rel_dw) weight_metric::rel_dw,
    NORMSIM_WEIGHT_KINDS(NORMSIM_WEIGHT_KIND_REL_DW)
#undef NORMSIM_WEIGHT_KIND_REL_DW
};

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

// Stores a computed value the config asks for; one that is NaN or Inf is also reported (it never reaches a
// CSV file, so without this row it would vanish silently).
struct Store {
  SampleRecord& r;
  const SampleScalars& s;
  const MetricSet& wanted;
  void operator()(int metric, int layer) const;
};

void Store::operator()(int metric, int layer) const {
  if (!wanted.contains(metric)) return;
  const double value = s.values[metric][layer];
  r.values[metric][layer] = value;
  if (!std::isfinite(value)) r.nonfinite_statistics.push_back({metric, layer});
  if (!measured_per_lane(metric)) return;
  for (std::size_t i = 0; i < s.lanes.size(); ++i) {
    const double lane = s.lanes[i][metric][layer];
    r.lanes[i][metric][layer] = lane;
    if (!std::isfinite(lane)) r.nonfinite_statistics.push_back({metric, layer, int(i)});
  }
}

// The forward metrics of streams x_0..x_{end-1}; a field is not stored with fewer tokens than it is defined
// for (token_cos with one token).
void store_forward(const Store& store, int forward_end, int tokens) {
  const int K = int(store.s.stream_finite.size()) - 1;
  const auto store_fields = [&](bool pair, int i) {
    for (const StreamFieldInfo& f : kStreamFieldTable)
      if (f.metric >= 0 && f.pair == pair && tokens >= f.min_tokens) store(f.metric, i);
  };
  for (int l = 0; l < forward_end && l <= K; ++l) {
    store_fields(false, l);
    store(metric::eff_rank, l);
    if (!store.s.lanes.empty()) store(metric::lane_cos, l);
  }
  for (int k = 0; k < K && k + 1 < forward_end; ++k) store_fields(true, k);
  for (int k = 0; k < K && k < forward_end; ++k) store(metric::branch_sq, k);
  // The updated pass is measured only from a finite first pass.
  for (int l = 0; store.s.updated && forward_end > K && l <= K; ++l) store(metric::output_change, l);
}

// The training loop's coordinate-check metrics of a finite forward (SampleScalars::train_step): the logits'
// size at every step, the update's sizes and the logits' change from step 1 on.
void store_train(const Store& store, const StackShape& shape) {
  const int K = int(store.s.stream_finite.size()) - 1;
  if (store.s.train_step < 0) return;
  store(metric::logit_mean_abs, K);
  if (store.s.train_step == 0) return;
  store(metric::logit_change, K);
  for (int k = 0; k < K; ++k)
    for (const WeightKind w : matrices_at(shape, k))
      if (kDwxMetric[int(w)] >= 0) {
        store(kDwxMetric[int(w)], k);
        store(kRelDwMetric[int(w)], k);
      }
  if (has_embedding(shape.cfg))
    for (const int m : {metric::dwx_emb, metric::rel_dw_emb}) store(m, 0);
  if (has_readout(shape.cfg))
    for (const int m : {metric::dwx_out, metric::rel_dw_out}) store(m, K);
}

// The training loop's coordinate-check values of t into s.values, where it measured them.
void copy_train(SampleScalars& s, const SampleTensors& t) {
  s.train_step = t.train_step;
  if (t.train_step < 0) return;
  const int K = int(t.stream.size()) - 1;
  s.values[metric::logit_mean_abs][K] = t.logit_mean_abs;
  s.values[metric::logit_change][K] = t.logit_change;
  put_update_sizes(s, t.update_sizes);
}

}  // namespace

bool wants_update_sizes(const MetricSet& m) {
  for (int id = metric::dwx_w1; id <= metric::rel_dw_out; ++id)
    if (m.contains(id)) return true;
  return false;
}

void put_update_sizes(SampleScalars& s, const UpdateSizes& u) {
  const int K = int(s.stream_finite.size()) - 1;
  for (std::size_t k = 0; k < u.dwx.size() && int(k) < K; ++k)
    for (int w = 0; w < kWeightKinds; ++w)
      if (kDwxMetric[w] >= 0) {
        s.values[kDwxMetric[w]][k] = u.dwx[k][std::size_t(w)];
        s.values[kRelDwMetric[w]][k] = u.rel_dw[k][std::size_t(w)];
      }
  s.values[metric::dwx_emb][0] = u.edge_dwx[std::size_t(Edge::embedding)];
  s.values[metric::rel_dw_emb][0] = u.edge_rel_dw[std::size_t(Edge::embedding)];
  s.values[metric::dwx_out][K] = u.edge_dwx[std::size_t(Edge::readout)];
  s.values[metric::rel_dw_out][K] = u.edge_rel_dw[std::size_t(Edge::readout)];
}

namespace {

// values[m][i] = compute() where metric m is wanted; the computation is skipped where it is not.
using Values = std::vector<std::vector<double>>;
template <class F>
void put_wanted(Values& values, const MetricSet& wanted, int m, int i, F&& compute) {
  if (wanted.contains(m)) values[m][i] = compute();
}

// What the wanted fields need of a stream's sums: the pair sums (with x_{l+1}) and the unit columns.
struct FieldNeeds {
  bool any = false, pair = false, columns = false;
};
FieldNeeds field_needs(const MetricSet& wanted) {
  FieldNeeds n;
  for (const StreamFieldInfo& f : kStreamFieldTable)
    if (f.metric >= 0 && wanted.contains(f.metric))
      n.any = true, n.pair |= f.pair, n.columns |= kFieldNeedsColumns[f.field];
  return n;
}

// The wanted stream fields of x_l from one pass over its rows (and x_{l+1}'s, next: null past the last
// stream measured, where the pair fields are not stored).
void measure_fields(Values& values, const MetricSet& wanted, FieldNeeds needs, int l, const MatD& x,
                    const MatD* next) {
  if (!needs.any) return;
  const StreamSums sums = stream_sums(x, needs.pair ? next : nullptr, needs.columns);
  for (const StreamFieldInfo& f : kStreamFieldTable)
    if (f.metric >= 0 && (!f.pair || next))
      put_wanted(values, wanted, f.metric, l,
                 [&] { return finish_stream_field(f.field, sums, int(x.rows()), int(x.cols())); });
}

// The per-stream metrics of streams [0, forward_end) (x_0..x_K, or one lane's) and the pair metrics they
// allow, split across `threads` by streams (each computed whole by one thread, so the values do not depend
// on the thread count): eff_rank's T x T Gram and eigensolver per stream are most of a sample's serial time
// once its products run on every thread.
void measure_path(Values& values, const std::vector<MatD>& stream, int forward_end, const MetricSet& wanted,
                  int threads) {
  const int n = std::min(forward_end, int(stream.size()));
  if (n <= 0) return;
  const FieldNeeds needs = field_needs(wanted);
  const double T = double(stream[0].rows()), work = double(n) * T * double(stream[0].size()) * 2;
  for_each_run(n, work, threads, [&](int first, int last) {
    for (int l = first; l < last; ++l) {
      measure_fields(values, wanted, needs, l, stream[l], l + 1 < n ? &stream[l + 1] : nullptr);
      put_wanted(values, wanted, metric::eff_rank, l, [&] { return effective_rank(stream[l]); });
    }
  });
}

// A block of n > 1 lanes: every lane's path metrics into s.lanes, and lane_cos of x_0..x_{end-1}.
void measure_lanes(SampleScalars& s, const SampleTensors& t, int forward_end, const MetricSet& wanted,
                   int threads) {
  for (std::size_t i = 0; i < t.lanes.size(); ++i)
    measure_path(s.lanes[i], t.lanes[i], forward_end, wanted, threads);
  std::vector<const MatD*> at(t.lanes.size());
  for (int l = 0; l < forward_end && l < int(t.stream.size()); ++l)
    put_wanted(s.values, wanted, metric::lane_cos, l, [&] {
      for (std::size_t i = 0; i < at.size(); ++i) at[i] = &t.lanes[i][std::size_t(l)];
      return lane_cosine(at);
    });
}

// The wanted forward metrics of x_0..x_{end-1} (and of their lanes) into s.
void measure_forward(SampleScalars& s, const SampleTensors& t, int forward_end, const MetricSet& wanted,
                     int threads) {
  const int K = int(t.stream.size()) - 1;
  const auto put = [&](int m, int i, auto&& compute) { put_wanted(s.values, wanted, m, i, compute); };
  measure_path(s.values, t.stream, forward_end, wanted, threads);
  measure_lanes(s, t, forward_end, wanted, threads);
  for (int k = 0; k < K && k < forward_end; ++k) put(metric::branch_sq, k, [&] { return t.branch_sq[k]; });
  s.updated = !t.output_change.empty();
  for (std::size_t l = 0; l < t.output_change.size(); ++l)
    put(metric::output_change, int(l), [&] { return t.output_change[l]; });
}

// The Jacobian estimates into s.values (the CPU backend measures them, when asked, from a finite forward).
void measure_jacobians(SampleScalars& s, const SampleTensors& t) {
  const auto put = [&s](int metric, const std::vector<double>& v) {
    for (std::size_t i = 0; i < v.size(); ++i) s.values[metric][i] = v[i];
  };
  put(metric::jac_sq, t.jac_sq);
  put(metric::jac_spread, t.jac_spread);
  put(metric::block_identity_dev, t.block_identity_dev);
}

}  // namespace

int gradw_metric(WeightKind w) {
  return kGradMetric[int(w)];
}

SampleScalars empty_scalars(int K, int lanes) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SampleScalars s;
  s.values.assign(metric::count, {});
  for (int m = 0; m < metric::count; ++m)
    s.values[m].assign(metric_table()[m].index == MetricIndex::stream ? K + 1 : K, nan);
  if (lanes > 1) s.lanes.assign(std::size_t(lanes), Values(metric::count));
  for (Values& lane : s.lanes)
    for (int m = 0; m < metric::count; ++m)
      if (measured_per_lane(m)) lane[m] = s.values[m];
  s.stream_finite.assign(K + 1, true);
  s.grad_finite.assign(K + 1, true);
  return s;
}

SampleRecord record_from_scalars(int sample, const SampleScalars& s, const StackShape& shape,
                                 const MetricSet& wanted) {
  const int K = int(s.stream_finite.size()) - 1;
  SampleRecord r;
  r.sample = sample;
  SampleScalars nan = empty_scalars(K, std::max(1, int(s.lanes.size())));
  r.values = std::move(nan.values);
  r.lanes = std::move(nan.lanes);
  // Forward: the first non-finite stream ends the forward metrics (everything after it derives from it).
  const Store store{r, s, wanted};
  const int forward_bad = first_bad_stream(s);
  store_forward(store, forward_bad < 0 ? K + 1 : forward_bad, shape.tokens);
  if (forward_bad < 0) store_train(store, shape);
  if (forward_bad >= 0) {
    r.nonfinite = NonFinite{"forward", forward_bad};
    return r;
  }
  if (!wanted.any_of(MetricPass::backward)) return r;  // no backward metric asked: none was run
  // Backward runs from x_K down to x_0: the first non-finite gradient in that order ends it.
  const int backward_bad = first_bad_gradient(s);
  for (int l = K; l > backward_bad; --l) store(metric::grad_sq, l);
  // Only the matrices sublayer k has (a routed MLP's router among them): the others hold NaN meaning "no such
  // matrix".
  for (int k = K - 1; k >= 0 && k >= backward_bad; --k)
    for (WeightKind w : matrices_at(shape, k)) store(kGradMetric[int(w)], k);
  if (backward_bad >= 0) {
    r.nonfinite = NonFinite{"backward", backward_bad};
    return r;  // the Jacobian probes run the same backward maps: not stored past a non-finite gradient
  }
  for (int m : {metric::jac_sq, metric::jac_spread, metric::block_identity_dev})
    for (int i = 0; i < int(s.values[m].size()); ++i) store(m, i);
  return r;
}

SampleRecord measure_sample(int sample, const SampleTensors& t, const StackShape& shape,
                            const MetricSet& wanted, int threads) {
  const int K = int(t.stream.size()) - 1;
  SampleScalars s = empty_scalars(K, std::max(1, int(t.lanes.size())));
  for (int l = 0; l <= K; ++l) s.stream_finite[l] = all_finite(t.stream[l]);
  s.output_finite = t.output_finite;
  const int forward_bad = first_bad_stream(s);
  measure_forward(s, t, forward_bad < 0 ? K + 1 : forward_bad, wanted, threads);
  copy_train(s, t);
  if (forward_bad >= 0 || !wanted.any_of(MetricPass::backward))
    return record_from_scalars(sample, s, shape, wanted);
  for (int l = K; l >= 0; --l) {
    s.grad_finite[l] = all_finite(t.grad[l]);
    if (!s.grad_finite[l]) break;  // nothing below it is stored
    if (!wanted.contains(metric::grad_sq)) continue;
    s.values[metric::grad_sq][l] = mean_square(t.grad[l]);
    for (std::size_t i = 0; i < t.lane_grad.size(); ++i)
      s.lanes[i][metric::grad_sq][l] = mean_square(t.lane_grad[i][std::size_t(l)]);
  }
  for (int k = 0; k < K; ++k)
    for (WeightKind w : matrices_at(shape, k)) s.values[kGradMetric[int(w)]][k] = t.gradw[k][int(w)];
  measure_jacobians(s, t);
  return record_from_scalars(sample, s, shape, wanted);
}

}  // namespace normsim::sim
