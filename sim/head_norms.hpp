// The attention's per-head rules, read by the CPU and CUDA backends: the logits' scale, and which per-head
// norms an attention branch applies before its logits: HybridNorm's QKV-norm (the block's
// Fqkv: RMSNorm of Q, K and V) or the qk_norm key (the configured norm of Q and K, any placement, per head
// or, qk_norm_scope = "projection", over the whole projection as OLMo-2). One rule, read by the CPU and the
// CUDA backends.
#pragma once
#include <cmath>

#include "sim/config.hpp"

namespace normsim::sim {

struct HeadNorms {
  bool qk = false;  // normalize every Q and K row, in qk_slices slices (width d/qk_slices each)
  bool v = false;   // normalize each head's slice of every V row (width d/heads)
  vocab::Norm kind = vocab::Norm::rmsnorm;
  bool qk_whole = false;  // Q and K over the whole row (OLMo-2's projection scope), else per head
  // Slices of a Q or K row that are normalized apart: heads, or 1 over the whole projection.
  int qk_slices(int heads) const { return qk_whole ? 1 : heads; }
};

// qkv_norm: the branch is Fqkv, whose Q and K are RMS-normalized already, so qk_norm adds nothing there.
// What multiplies the logits q.k of a head of width dh: 1 / (sqrt(dh) temperature), or muP's 1 / (dh
// temperature). One rule, read by the CPU and the CUDA attention, forward and backward.
inline double logit_scale(const Config& c, int dh) {
  const double by = c.logit_scaling == vocab::LogitScaling::mup ? double(dh) : std::sqrt(double(dh));
  return 1.0 / (by * c.attention_temperature);
}

inline HeadNorms head_norms(const Config& c, bool qkv_norm) {
  if (qkv_norm) return {true, true, vocab::Norm::rmsnorm, false};
  return {c.qk_norm, false, c.norm, c.qk_norm_scope == vocab::QkNormScope::projection};
}

}  // namespace normsim::sim
