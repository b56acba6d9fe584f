#include "gpu/memory_plan.hpp"

#include <algorithm>

namespace normsim::gpu {

bool frobenius_by_gram(int T, int n, int m) {
  const double Td = T, nd = n, md = m;
  return Td * Td * (nd + md) < Td * nd * md;
}

std::size_t frobenius_scratch_elements(int T, int n, int m) {
  const std::size_t scaled_operands = std::size_t(T) * (std::size_t(n) + std::size_t(m));
  return scaled_operands + (frobenius_by_gram(T, n, m) ? 2 * std::size_t(T) * T : std::size_t(n) * m);
}

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
    for (sim::WeightKind w : s.weights(k)) n += std::size_t(s.fan_in(w)) * std::size_t(s.fan_out(w));
  return n;
}

// Activations the tape keeps for the backward plus the transient buffers of the largest branch backward
// (gpu/gpu_graph.hpp, gpu/gpu_branches.cpp): per sublayer up to 6 T d for streams, norm outputs, branch
// outputs and gradients in flight; attention adds Q, K, V, O and the probabilities, an MLP its h (and g).
std::size_t activation_elements(const sim::StackShape& s) {
  const std::size_t T = s.tokens, d = s.width, H = s.hidden, heads = s.heads;
  std::size_t keep = 0, transient = 0;
  for (int k = 0; k < s.depth; ++k) {
    keep += 6 * T * d;
    if (s.branch(k) !=
        sim::BranchKind::mlp) {  // self- or cross-attention (which also keeps its encoder output)
      keep += (s.branch(k) == sim::BranchKind::cross_attention ? 5 : 4) * T * d + heads * T * T;
      // backward: dO split by heads, dQ, dK, dV by heads and merged, a merged norm output, dP
      transient = std::max(transient, 8 * T * d + 2 * heads * T * T);
    } else {
      keep += T * H * (s.swiglu ? 2 : 1);
      transient = std::max(transient, 3 * T * H);
    }
  }
  // The weight-gradient norms' scratch, at the larger of the two product shapes (d x H, d x d).
  return keep + transient +
         std::max(frobenius_scratch_elements(s.tokens, s.width, s.hidden),
                  frobenius_scratch_elements(s.tokens, s.width, s.width));
}

namespace {
int samples_that_fit(double budget, double per_sample, int samples) {
  const double fit = budget / per_sample;
  return std::clamp(fit < double(samples) ? int(fit) : samples, 1, std::max(samples, 1));
}
}  // namespace

MemoryPlan plan_memory(const sim::StackShape& s, std::size_t element_bytes, const std::string& mode,
                       double budget, int samples) {
  MemoryPlan p;
  p.activation_bytes = double(activation_elements(s)) * double(element_bytes);
  const double kept = double(weight_elements(s)) * double(element_bytes);
  const double scratch = double(largest_weight(s)) * double(element_bytes);
  // auto: redraw the weights when that runs more samples at once (drawing is cheap next to the products),
  // or when keeping them does not fit even one sample.
  const int keep_batch = samples_that_fit(budget, p.activation_bytes + kept, samples);
  const int redraw_batch = samples_that_fit(budget, p.activation_bytes + scratch, samples);
  p.recompute =
      mode == "true" || (mode == "auto" && (redraw_batch > keep_batch || p.activation_bytes + kept > budget));
  p.weight_bytes = p.recompute ? scratch : kept;
  p.batch_samples = p.recompute ? redraw_batch : keep_batch;
  return p;
}

}  // namespace normsim::gpu
