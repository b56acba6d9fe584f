#include "sim/cpu/cpu_pass.hpp"

#include <algorithm>

#include "sim/cpu/cpu_jacobian_device.hpp"
#include "sim/cpu/cpu_tape_device.hpp"
#include "sim/cpu/update_pass.hpp"
#include "sim/inputs.hpp"
#include "sim/stack_build.hpp"

namespace normsim::sim {

namespace {

// dLoss/dz of the configured loss on batch `batch` at what it reads (y, or the logits z = y W_out): z -
// target for mse, a fixed random readout direction otherwise.
template <class R>
Mat<R> loss_gradient(const Config& config, const SampleKey& key, std::uint32_t batch, const Mat<R>& y) {
  const int T = int(y.rows()), d = int(y.cols());  // d: width, or output_width
  Mat<R> dy(T, d);
  for (int t = 0; t < T; ++t)
    for (int i = 0; i < d; ++i)
      dy(t, i) = config.loss == vocab::Loss::mse
                     ? R(double(y(t, i)) - target_entry(config.seed, key.sample, t, i, d, batch))
                     : R(readout_entry(config.seed, key.sample, t, i, d, batch));
  return dy;
}

// The gradient metric's tensor at a layer of n > 1 lanes: dLoss/dm of the lanes' mean m with each lane's
// deviation from it held fixed, i.e. the sum of the lanes' gradients (a Value shared by several lanes is
// counted once: its gradient already sums theirs). At hyper-connections' init (equal lanes, sum readout,
// scale-invariant final norm) it is Pre-LN's gradient (docs/design/multistream.md 3.1).
template <class R>
MatD lanes_gradient(const CpuTape<R>& graph, const Lanes& lanes) {
  MatD sum = graph.grad(lanes.front()).template cast<double>();
  for (std::size_t i = 1; i < lanes.size(); ++i)
    if (std::find_if(lanes.begin(), lanes.begin() + i, [&](Value v) { return v.id == lanes[i].id; }) ==
        lanes.begin() + i)
      sum += graph.grad(lanes[i]).template cast<double>();
  return sum;
}

// A block of n > 1 lanes: every lane's streams x^i_0..x^i_K (and, from a finished backward, their
// gradients) into out.lanes, out.lane_grad.
template <class R>
void copy_lanes(const CpuTape<R>& graph, const StackValues& sv, bool gradients, SampleTensors& out) {
  const std::size_t n = sv.lanes.empty() ? 0 : sv.lanes.front().size();
  auto& target = gradients ? out.lane_grad : out.lanes;
  target.assign(n, {});
  for (std::size_t i = 0; i < n; ++i)
    for (const Lanes& layer : sv.lanes)
      target[i].push_back(gradients ? graph.grad(layer[i]).template cast<double>()
                                    : graph.value(layer[i]).template cast<double>());
}

// The loss's backward from a finite forward, the stream gradients and the Jacobian probes into `out`.
template <class R>
void run_backward(CpuTape<R>& graph, const StackValues& sv, const Config& config, SampleKey key,
                  std::uint32_t batch, UpdateHooks<R> hooks, PassTensors& out) {
  graph.backward(sv.loss_input(), loss_gradient<R>(config, key, batch, graph.value(sv.loss_input())));
  if (hooks.record) hooks.record->seal();
  SampleTensors& t = out.tensors;
  out.backward_ok = true;
  // At l = 0 the lanes are copies of x_0 (sim/stack_build.cpp), which `emb` reads too: the mean's gradient
  // is x_0's own, its copies' and emb's together, as the mean field predicts it
  // (theory/placements/lanes.cpp).
  for (std::size_t l = 0; l < sv.stream.size(); ++l) {
    t.grad.push_back(sv.lanes.empty() || l == 0 ? graph.grad(sv.stream[l]).template cast<double>()
                                                : lanes_gradient(graph, sv.lanes[l]));
    out.backward_ok = out.backward_ok && all_finite(t.grad.back());
  }
  copy_lanes(graph, sv, true, t);
  t.gradw = graph.device().gradw;  // before the Jacobian probes' reverse passes
  JacobianEstimates j =
      estimate_jacobians(graph, sv.stream, key, config.jacobian_probes, JacobianWanted::of(config.metrics));
  t.jac_sq = std::move(j.jac_sq);
  t.jac_spread = std::move(j.jac_spread);
  t.block_identity_dev = std::move(j.block_identity_dev);
}

}  // namespace

template <class R>
PassTensors run_pass(const StackShape& shape, const Placement& placement, SampleKey key, std::uint32_t batch,
                     UpdateHooks<R> hooks, PlacementState& state, CpuWorkspace<R>& ws) {
  const Config& config = shape.cfg;
  PassTensors out;
  SampleTensors& t = out.tensors;
  CpuTape<R> graph(shape, placement, key, &ws, hooks);
  const StackValues sv =
      build_stack(graph, shape, placement, graph.input(input_matrix<R>(config, key, batch)), &state);
  for (const Value v : sv.stream) t.stream.push_back(graph.value(v).template cast<double>());
  copy_lanes(graph, sv, false, t);
  t.output_finite = all_finite(graph.value(sv.output));
  t.branch_sq = graph.device().branch_sq;
  out.loss_input = graph.value(sv.loss_input()).template cast<double>();  // y, or the logits
  out.forward_ok = t.output_finite && all_finite(out.loss_input);
  for (const MatD& s : t.stream) out.forward_ok = out.forward_ok && all_finite(s);
  // The backward runs when a backward metric is asked for, or when the update is a step on the loss.
  const bool records = hooks.record && hooks.record->needs_gradients();
  if (out.forward_ok && (config.metrics.any_of(MetricPass::backward) || records))
    run_backward(graph, sv, config, key, batch, hooks, out);
  else
    t.gradw = graph.device().gradw;
  return out;
}

template PassTensors run_pass<float>(const StackShape&, const Placement&, SampleKey, std::uint32_t,
                                     UpdateHooks<float>, PlacementState&, CpuWorkspace<float>&);
template PassTensors run_pass<double>(const StackShape&, const Placement&, SampleKey, std::uint32_t,
                                      UpdateHooks<double>, PlacementState&, CpuWorkspace<double>&);

}  // namespace normsim::sim
