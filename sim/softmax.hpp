// The attention softmax of one row of scores, forward and backward: the one host definition, run by the
// CPU backend (sim/cpu/cpu_attention_device.hpp, per head) and by the CUDA kernels' CPU twins
// (gpu/ops.hpp, over every head's rows at once), which the device kernels (gpu/ops/softmax.cu) are tested
// against. Sums in double.
#pragma once
#include <algorithm>
#include <cmath>

namespace normsim::sim {

// In place: row[s] = exp(row[s] - max) / sum over s <= last of the same, and 0 past `last` (the causal mask:
// last = t for row t; T - 1 without one).
template <class R>
void softmax_row(R* row, int T, int last) {
  R mx = row[0];
  for (int s = 1; s <= last; ++s) mx = std::max(mx, row[s]);
  double sum = 0;
  for (int s = 0; s <= last; ++s) sum += std::exp(double(row[s] - mx));
  for (int s = 0; s < T; ++s) row[s] = s <= last ? R(std::exp(double(row[s] - mx)) / sum) : R(0);
}

// In place: dp[s] := p[s] (dp[s] - sum_s dp p) scale, the softmax backward times the logits' scale
// (1 / sqrt(d_head)), with p the row's probabilities.
template <class R>
void softmax_backward_row(const R* p, R* dp, int T, double scale) {
  double dot = 0;
  for (int s = 0; s < T; ++s) dot += double(dp[s]) * double(p[s]);
  for (int s = 0; s < T; ++s) dp[s] = R(R(double(p[s]) * (double(dp[s]) - dot)) * R(scale));
}

}  // namespace normsim::sim
