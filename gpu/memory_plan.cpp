#include "gpu/memory_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "gpu/device_stats.hpp"
#include "gpu/stream_statistics.hpp"
#include "sim/edges.hpp"
#include "sim/init.hpp"
#include "sim/jacobian_wanted.hpp"
#include "sim/metric_set.hpp"
#include "sim/metrics.hpp"
#include "sim/placement.hpp"
#include "sim/single_update.hpp"
#include "sim/unit_plan.hpp"

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

bool frobenius_by_gram(int T, int n, int m) {
  const double Td = T, nd = n, md = m;
  return Td * Td * (nd + md) < Td * nd * md;
}

// Either the operands scaled straight into double and the two Grams in double (two float elements per
// double) or the scaled operands and the n x m product.
std::size_t frobenius_scratch_elements(int T, int n, int m) {
  const std::size_t operands = std::size_t(T) * (std::size_t(n) + std::size_t(m));
  return frobenius_by_gram(T, n, m) ? 2 * (operands + 2 * std::size_t(T) * T) : operands + std::size_t(n) * m;
}

namespace {
// A bias (gpu/gpu_weights.hpp GpuWeights::bias, drawn for each product) counted as one more row of its
// matrix; its column of ones (T per sample) is within the slack of a T x fan_out product's buffers.
std::size_t bias_rows(const sim::StackShape& s, sim::WeightKind w) {
  return sim::has_bias(s.cfg, w) ? 1 : 0;
}
}  // namespace

bool gradient_by_factors(int T, int n, int m) {
  return double(T) * (double(n) + double(m)) < double(n) * double(m);
}

std::size_t optimizer_elements(const sim::StackShape& s) {
  if (s.cfg.steps == 0) return 0;
  std::size_t largest = largest_weight(s);
  for (const sim::Edge e : {sim::Edge::embedding, sim::Edge::readout}) {
    const sim::EdgeDims d = sim::edge_dims(s.cfg, e);
    if (sim::has_edge(s.cfg, e)) largest = std::max(largest, std::size_t(d.rows) * std::size_t(d.cols));
  }
  const std::size_t trained = weight_elements(s) + std::size_t(sim::edge_weight_entries(s.cfg));
  // The update sizes' probe (gpu/gpu_update_probe.hpp): dW of a sublayer's matrices until their products,
  // a copy of W_0 and x dW, at most 4 of the largest matrix for an MLP sublayer (two matrices, T <= fan_in).
  bool sizes = false;
  for (int id = sim::metric::dwx_w1; id <= sim::metric::rel_dw_out; ++id)
    sizes = sizes || s.cfg.metrics.contains(id);
  const std::size_t probe = sizes ? 4 * largest : 0;
  return (s.cfg.update == vocab::Update::adam ? 3 * trained + largest : 2 * trained) + probe;
}

std::size_t update_elements(const sim::StackShape& s) {
  if (s.cfg.update == vocab::Update::none) return 0;
  const std::size_t T = s.tokens;
  if (s.cfg.steps > 0) {
    const int loss_width = sim::has_readout(s.cfg) ? s.cfg.output_width : s.width;
    return std::size_t(s.depth + 1) * T * s.width + T * std::size_t(loss_width) + optimizer_elements(s);
  }
  std::size_t gradients = 0;
  if (sim::steps_on_loss(s.cfg.update))
    for (int k = 0; k < s.depth; ++k)
      for (sim::WeightKind w : s.weights(k)) {
        const std::size_t n = s.fan_in(w), m = s.fan_out(w);
        gradients +=
            (gradient_by_factors(s.tokens, int(n), int(m)) ? T * (n + m) : n * m) + bias_rows(s, w) * m;
      }
  const std::size_t streams = std::size_t(s.depth + 1) * T * s.width;
  return streams + gradients + largest_weight(s);
}

std::size_t edge_elements(const sim::StackShape& s) {
  std::size_t n = std::size_t(sim::edge_entries(s.cfg));
  const std::size_t T = s.tokens;
  for (const sim::Edge e : {sim::Edge::embedding, sim::Edge::readout}) {
    const sim::EdgeDims d = sim::edge_dims(s.cfg, e);
    const std::size_t rows = d.rows, cols = d.cols;
    if (sim::has_edge(s.cfg, e) && sim::steps_on_loss(s.cfg.update) && s.cfg.steps == 0)
      n += gradient_by_factors(s.tokens, d.rows, d.cols) ? T * (rows + cols) : rows * cols;
  }
  return n;
}

std::size_t jacobian_elements(const sim::StackShape& s) {
  const sim::JacobianWanted j = sim::JacobianWanted::of(s.cfg.metrics);
  if (!j.any()) return 0;
  const std::size_t stream = std::size_t(s.tokens) * s.width;
  // The one update keeps this pass's streams already; a training step keeps step 0's, not this pass's.
  const bool streams = j.blocks && (s.cfg.update == vocab::Update::none || s.cfg.steps > 0);
  return (streams ? std::size_t(s.depth + 1) * stream : 0) + 2 * stream;
}

namespace {
// A routed MLP (gpu/gpu_moe.cpp) keeps E experts' weights and tapes, and its router (d x E), logits and
// gates (T x E each) and every expert's output (T x d) until the backward; a dense MLP is one copy.
std::size_t mlp_copies(const sim::StackShape& s, int k) {
  return s.branch(k) == sim::BranchKind::mlp ? std::size_t(std::max(1, s.experts)) : 1;
}
std::size_t router_elements(const sim::StackShape& s, int k) {
  if (s.branch(k) != sim::BranchKind::mlp || s.experts == 0) return 0;
  const std::size_t E = s.experts;
  return std::size_t(s.width) * E + 2 * std::size_t(s.tokens) * E + E * s.tokens * s.width;
}
}  // namespace

std::size_t largest_weight(const sim::StackShape& s) {
  std::size_t m = 0;
  for (int k = 0; k < s.depth; ++k)
    for (sim::WeightKind w : s.weights(k))
      m = std::max(m, std::size_t(s.fan_in(w)) * std::size_t(s.fan_out(w)));
  return m;
}

std::size_t weight_elements(const sim::StackShape& s) {
  std::size_t n = 0;
  for (int k = 0; k < s.depth; ++k)
    for (sim::WeightKind w : s.weights(k))
      n += mlp_copies(s, k) * (std::size_t(s.fan_in(w)) + bias_rows(s, w)) * std::size_t(s.fan_out(w));
  return n;
}

namespace {

// What sublayer k's tape keeps for the backward (sim/tape.hpp on gpu/gpu_tape_device.hpp,
// gpu/gpu_attention_device.hpp): up to 6 T d for streams, norm outputs, branch outputs and gradients in
// flight; attention adds Q, K, V, O and the probabilities (and with attention_gate its pre-activations, at
// most T d), an MLP its h (and g).
std::size_t tape_elements(const sim::StackShape& s, int k) {
  const std::size_t T = s.tokens, d = s.width, H = s.hidden, heads = s.heads;
  const std::size_t gate = s.gate == vocab::AttentionGate::none ? 0 : T * d;
  if (s.branch(k) == sim::BranchKind::attention) return 6 * T * d + 4 * T * d + gate + heads * T * T;
  if (s.branch(k) == sim::BranchKind::cross_attention)  // also keeps the encoder output
    return 6 * T * d + 5 * T * d + heads * T * T;
  return 6 * T * d + mlp_copies(s, k) * T * H * (s.swiglu ? 2 : 1) + router_elements(s, k);
}

// The transient buffers of the largest branch backward plus the weight-gradient norms' scratch at the
// larger of the two product shapes (d x H, d x d).
std::size_t transient_elements(const sim::StackShape& s) {
  const std::size_t T = s.tokens, d = s.width, H = s.hidden, heads = s.heads;
  std::size_t transient = 0;
  for (int k = 0; k < s.depth; ++k)
    transient =
        std::max(transient, s.branch(k) != sim::BranchKind::mlp
                                ? 8 * T * d + 2 * heads * T * T  // dO, dQ, dK, dV split and merged, dP
                                      + (s.gate == vocab::AttentionGate::none ? 0 : 2 * T * d)  // O gated, dz
                                : 3 * T * H);
  return transient + std::max(frobenius_scratch_elements(s.tokens, s.width, s.hidden),
                              frobenius_scratch_elements(s.tokens, s.width, s.width));
}

// A placement of n > 1 lanes (sim/stack_build.cpp): per sublayer at most n^2 mixing scales and n^2 adds, n
// branch scales and adds, n copies (lanes of their own) and the lanes' mean (n adds and a scale); x_0's n
// copies; per layer the gradient's lane sum.
std::size_t lanes_elements(const sim::StackShape& s) {
  const std::size_t n = std::size_t(sim::placement_for(s.cfg)->lanes()), Td = std::size_t(s.tokens) * s.width;
  if (n == 1) return 0;
  return (std::size_t(s.depth) * (2 * n * n + 4 * n + 1) + n) * Td + std::size_t(s.depth + 1) * Td;
}

int samples_that_fit(double budget, double per_sample, int samples) {
  const double fit = budget / per_sample;
  return std::clamp(fit < double(samples) ? int(fit) : samples, 1, std::max(samples, 1));
}

// The segment length that needs the least memory (ties: the longer segment, fewer recomputed boundaries).
int best_checkpoint_interval(const sim::StackShape& s) {
  int best = 1;
  std::size_t least = std::numeric_limits<std::size_t>::max();
  for (int every = 1; every <= s.depth; ++every)
    if (const std::size_t e = checkpointed_activation_elements(s, every); e <= least) least = e, best = every;
  return best;
}

}  // namespace

std::size_t activation_elements(const sim::StackShape& s) {
  std::size_t keep = 0;
  for (int k = 0; k < s.depth; ++k) keep += tape_elements(s, k);
  return keep + lanes_elements(s) + transient_elements(s);
}

bool runs_backward(const sim::StackShape& s) {
  return s.cfg.metrics.any_of(sim::MetricPass::backward) || sim::steps_on_loss(s.cfg.update);
}

std::size_t forward_only_activation_elements(const sim::StackShape& s) {
  const int unit = std::min(s.depth, 3);
  std::size_t window = 0;
  for (int a = 0; a + unit <= s.depth; ++a) {
    std::size_t tape = 0;
    for (int k = a; k < a + unit; ++k) tape += tape_elements(s, k);
    window = std::max(window, tape);
  }
  return 2 * std::size_t(s.tokens) * s.width + window + transient_elements(s);
}

std::size_t checkpointed_activation_elements(const sim::StackShape& s, int every) {
  const std::size_t checkpoints = std::size_t((s.depth + every - 1) / every) + 1;
  std::size_t segment = 0;  // the largest segment's tape
  for (int a = 0; a < s.depth; a += every) {
    std::size_t tape = 0;
    for (int k = a; k < std::min(a + every, s.depth); ++k) tape += tape_elements(s, k);
    segment = std::max(segment, tape);
  }
  return checkpoints * std::size_t(s.tokens) * s.width + segment + transient_elements(s);
}

double statistics_bytes(const sim::StackShape& s, std::size_t element_bytes) {
  const double T = s.tokens, d = s.width, n = std::min(T, d);
  const double wide = element_bytes == sizeof(double) ? 0 : T * d;
  const int lanes = sim::placement_for(s.cfg)->lanes();
  const double stats_buffer = double(DeviceStats::doubles_per_sample(s.depth, lanes));  // per sample
  const double slots = gram_slots(s.tokens, s.width, eff_rank_streams(s.depth, lanes));
  return 8 * (7 * T + d + wide + slots * (2 * n * n + n) + 6 * n + stats_buffer) + 4 * slots;
}

MemoryPlan plan_memory(const sim::StackShape& s, std::size_t element_bytes, vocab::Recompute mode,
                       double budget, int samples) {
  MemoryPlan p;
  const double bytes = double(element_bytes);
  p.forward_only = !runs_backward(s);
  // A placement of lanes is built whole (sim/stack_build.hpp), forward only too.
  p.checkpoint_every = p.forward_only && sim::placement_for(s.cfg)->lanes() == 1 ? 1 : 0;
  p.activation_bytes =
      double((p.checkpoint_every > 0 ? forward_only_activation_elements(s) : activation_elements(s)) +
             edge_elements(s)) *
      bytes;
  p.statistics_bytes = statistics_bytes(s, element_bytes);
  p.side_pass_bytes = double(update_elements(s) + jacobian_elements(s)) * bytes;
  const double kept = double(weight_elements(s)) * bytes, scratch = double(largest_weight(s)) * bytes;
  const double tape = p.activation_bytes + p.statistics_bytes + p.side_pass_bytes;
  // auto: redraw the weights when that runs more samples at once (drawing is cheap next to the products),
  // or when keeping them does not fit even one sample.
  const int keep_batch = samples_that_fit(budget, tape + kept, samples);
  const int redraw_batch = samples_that_fit(budget, tape + scratch, samples);
  const bool automatic = mode == vocab::Recompute::auto_;
  p.recompute =
      mode == vocab::Recompute::yes || (automatic && (redraw_batch > keep_batch || tape + kept > budget));
  p.weight_bytes = p.recompute ? scratch : kept;
  if (!p.forward_only && p.per_sample_bytes() > budget) {  // the whole tape does not fit: checkpoint it
    p.checkpoint_every = best_checkpoint_interval(s);
    p.activation_bytes =
        double(checkpointed_activation_elements(s, p.checkpoint_every) + edge_elements(s)) * bytes;
    if (automatic) p.recompute = true, p.weight_bytes = scratch;
  }
  p.batch_samples = samples_that_fit(budget, p.per_sample_bytes(), samples);
  return p;
}

std::string describe_plan(const MemoryPlan& p, double budget) {
  const std::string tape = p.forward_only           ? "forward only, one unit's tape at a time "
                           : p.checkpoint_every > 0 ? "activations checkpointed every " +
                                                          std::to_string(p.checkpoint_every) + " sublayers "
                                                    : "whole tape ";
  return "GPU plan per sample: weights " + std::string(p.recompute ? "redrawn (scratch " : "kept (") +
         sim::human_bytes(p.weight_bytes) + "), " + tape + sim::human_bytes(p.activation_bytes) +
         ", statistics " + sim::human_bytes(p.statistics_bytes) +
         (p.side_pass_bytes > 0 ? ", update or probes " + sim::human_bytes(p.side_pass_bytes) : "") + "; " +
         std::to_string(p.batch_samples) + " samples per batch in " + sim::human_bytes(budget) +
         (p.per_sample_bytes() > budget ? " (DOES NOT FIT)" : "");
}

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
