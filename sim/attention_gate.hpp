// The attention output gate (attention_gate; Qiu et al. 2025, "Gated Attention for Large Language Models",
// qiuzh20/gated_attention modeling_qwen3.py:355-356): y = o * sigmoid(z) before W_O, o the heads' output of
// one token (d), z = u W_g its gate pre-activations (G of them), each gate j covering `group` consecutive
// coordinates [j group, (j + 1) group): group 1 (elementwise, G = d) or d / heads (headwise, G = heads).
// Written once for the CPU backend (sim/cpu/cpu_attention_device.hpp), the CUDA kernels
// (gpu/ops/attention_gate.cu) and their references (gpu/ops.hpp). Sums in double.
#pragma once
#include <cmath>

#include "sim/hd.hpp"
#include "vocab/enums.hpp"

namespace normsim::sim {

// Coordinates per gate: 1 elementwise, d / heads headwise (none: no gate, 0).
inline int gate_group(vocab::AttentionGate g, int width, int heads) {
  if (g == vocab::AttentionGate::none) return 0;
  return g == vocab::AttentionGate::headwise ? width / heads : 1;
}

NORMSIM_HD double gate_sigmoid(double z) {
  return 1.0 / (1.0 + exp(-z));
}

// Gate j of one token: y[i] = o[i] sigmoid(z) for its `group` coordinates (o, y point at the first).
template <class R>
NORMSIM_HD void gate_forward_group(const R* o, R* y, double z, int group) {
  const double g = gate_sigmoid(z);
  for (int i = 0; i < group; ++i) y[i] = R(double(o[i]) * g);
}

// Its backward from dy = dLoss/dy: d_o[i] = dy[i] sigmoid(z) (d_o may be dy), and the returned
// dLoss/dz = sigmoid'(z) sum_i dy[i] o[i], sigmoid' = sigmoid (1 - sigmoid).
template <class R>
NORMSIM_HD double gate_backward_group(const R* o, const R* dy, R* d_o, double z, int group) {
  const double g = gate_sigmoid(z);
  double dot = 0;
  for (int i = 0; i < group; ++i) {
    const double dyi = double(dy[i]);
    dot += dyi * double(o[i]);
    d_o[i] = R(dyi * g);
  }
  return dot * g * (1.0 - g);
}

}  // namespace normsim::sim
