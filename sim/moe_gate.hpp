// The gates of a routed MLP (mixture of experts) for one token, forward and backward: the one definition, run
// by the CPU backend (sim/cpu/cpu_moe.cpp) and by the CUDA backend's kernels and their CPU twins. From the
// token's router logits z[0..E):
//   p = softmax(z) over all E experts; S = the k experts of largest z (= of largest p; ties to the lower
//   index); renormalized: g_e = p_e / sum_{j in S} p_j  (Mixtral: huggingface/transformers
//                 src/transformers/models/mixtral/modeling_mixtral.py, MixtralSparseMoeBlock.forward, lines
//                 114-116 at 00d4b3d: softmax, topk, routing_weights /= routing_weights.sum);
//   softmax:      g_e = p_e                    (OLMoE with norm_topk_prob = False; Switch's top-1 router)
// for e in S, and g_e = 0 elsewhere. The selection is piecewise constant: no gradient flows through it.
// Sums in double; with E = 1 the gate is exactly 1 (exp(0) / exp(0)).
#pragma once
#include <cmath>

#include "sim/hd.hpp"

namespace normsim::sim {

// Whether expert e is among the k selected by logits z (rank by z descending, ties to the lower index).
template <class R>
NORMSIM_HD bool moe_selected(const R* z, int E, int k, int e) {
  int rank = 0;
  for (int j = 0; j < E; ++j)
    if (z[j] > z[e] || (z[j] == z[e] && j < e)) ++rank;
  return rank < k;
}

// max z and the two normalizers: sum over all experts and over the selected of exp(z - max).
struct MoeSums {
  double max, all, selected;
};
template <class R>
NORMSIM_HD MoeSums moe_sums(const R* z, int E, int k) {
  MoeSums s{double(z[0]), 0.0, 0.0};
  for (int e = 1; e < E; ++e) s.max = double(z[e]) > s.max ? double(z[e]) : s.max;
  for (int e = 0; e < E; ++e) {
    const double x = std::exp(double(z[e]) - s.max);
    s.all += x;
    if (moe_selected(z, E, k, e)) s.selected += x;
  }
  return s;
}

// g[0..E) from z[0..E).
template <class R>
NORMSIM_HD void moe_gates(const R* z, int E, int k, bool renormalized, R* g) {
  const MoeSums s = moe_sums(z, E, k);
  const double denom = renormalized ? s.selected : s.all;
  for (int e = 0; e < E; ++e)
    g[e] = moe_selected(z, E, k, e) ? R(std::exp(double(z[e]) - s.max) / denom) : R(0);
}

// dz[0..E) = dLoss/dz from dg[0..E) = dLoss/dg (read on the selected experts only), the selection held fixed.
// With q = g (renormalized: the softmax over S) or q = p (softmax: over all E), and dot = sum_{j in S} q_j
// dg_j:
//   dz_j = q_j ([j in S] dg_j - dot), which is 0 off S when renormalized.
template <class R>
NORMSIM_HD void moe_gates_backward(const R* z, int E, int k, bool renormalized, const R* dg, R* dz) {
  const MoeSums s = moe_sums(z, E, k);
  const double denom = renormalized ? s.selected : s.all;
  double dot = 0;
  for (int e = 0; e < E; ++e)
    if (moe_selected(z, E, k, e)) dot += std::exp(double(z[e]) - s.max) / denom * double(dg[e]);
  for (int e = 0; e < E; ++e) {
    const bool in = moe_selected(z, E, k, e);
    const double q = (in || !renormalized) ? std::exp(double(z[e]) - s.max) / denom : 0.0;
    dz[e] = R(q * ((in ? double(dg[e]) : 0.0) - dot));
  }
}

}  // namespace normsim::sim
