// The attention branch, written once for every device (issue 31 item 1): which products it runs, in which
// order, which weight gradients it records, and where the value residual and the output gate come in. A
// device runs it on one sample (sim/cpu/cpu_attention_device.hpp) or on a batch
// (gpu/gpu_attention_device.hpp).
//   Q = u Wq, K = kv Wk, V = kv Wv (kv: u, or the decoder's encoder output E for cross-attention); per head
//   A = softmax(Q_h K_h^T scale) (causal: s <= t), O = concat_h(A V_h); F = O Wo, or with attention_gate
//   F = (O * sigmoid(u Wga)) Wo (sim/attention_gate.hpp). Q, K (and V) normalized first where
//   sim/head_norms.hpp says; V mixed with V_1 first where the value residual says (sim/value_residual.hpp).
//
// A Device supplies, beside the products of sim/mlp_branch.hpp (Buffer, In, NormsOut, view, project,
// back_project, weight_gradients):
//   Heads                               the state the heads keep from forward to backward: members q, k, v,
//                                       z (the gate's pre-activations) and enc (the encoder output), Buffers;
//   attend(heads)                       q, k, v as projected to O (norms, logits, softmax, mixing), kept;
//   wo_input(heads, scratch)            what Wo reads: O, or O * sigmoid(z) (in scratch, or kept, as it
//   likes); attend_backward(heads, d_o, dq, dk, dv)   dLoss/dO (gated already) to the projections' dLoss/dQ,
//   dK, dV; gate_backward(heads, d_o, dz)       d_o from dLoss/d(O gated) to dLoss/dO in place, dz =
//   dLoss/dz; mix_values(v, residual), mix_values_backward(dv, residual)   the value residual's two steps;
//   weight_gradient_early(g, norms)     a weight gradient whose operands live until the last
//   weight_gradients:
//                                       taken now (CUDA, which frees O before the heads' backward) or with
//                                       the next weight_gradients (the CPU, all norms concurrently);
//   release(heads)                      after the backward.
#pragma once
#include <array>
#include <utility>

#include "sim/attention_gate.hpp"
#include "sim/head_norms.hpp"
#include "sim/mlp_branch.hpp"
#include "sim/stack.hpp"
#include "sim/value_residual.hpp"

namespace normsim::sim {

// The rules of the attention of sublayer k, read by the branch and by every device.
struct AttentionShape {
  int heads;
  bool cross, causal;
  HeadNorms norms;
  double eps, gain, logit_scale;
  int group;                        // coordinates per output gate; 0: no gate (sim/attention_gate.hpp)
  std::array<WeightKind, 4> kinds;  // q, k, v, o
};

// qkv_norm: the branch is Fqkv (sim/head_norms.hpp).
inline AttentionShape attention_shape(const StackShape& s, int k, bool qkv_norm) {
  const bool cross = s.branch(k) == BranchKind::cross_attention;
  return {s.heads,
          cross,
          s.cfg.causal && !cross,
          head_norms(s.cfg, qkv_norm),
          s.cfg.norm_eps,
          s.cfg.norm_gain,
          logit_scale(s.cfg, s.width / s.heads),
          cross ? 0 : gate_group(s.gate, s.width, s.heads),
          cross ? std::array{WeightKind::cq, WeightKind::ck, WeightKind::cv, WeightKind::co}
                : std::array{WeightKind::wq, WeightKind::wk, WeightKind::wv, WeightKind::wo}};
}

template <class Device>
class AttentionBranch {
 public:
  using Buffer = typename Device::Buffer;
  using In = typename Device::In;
  using Heads = typename Device::Heads;

  // encoder: the encoder output E for cross-attention (an empty Buffer otherwise).
  AttentionBranch(const AttentionShape& a, Buffer encoder) : a_(a) { heads_.enc = std::move(encoder); }

  Buffer forward(Device& dev, In u) {
    const In kv = a_.cross ? dev.view(heads_.enc) : u;
    dev.project(u, a_.kinds[0], heads_.q);
    dev.project(kv, a_.kinds[1], heads_.k);
    dev.project(kv, a_.kinds[2], heads_.v);
    if (residual_.mixes) {
      dev.mix_values(heads_.v, residual_);
      residual_.first = nullptr;
    }
    dev.attend(heads_);
    if (a_.group) dev.project(u, WeightKind::wga, heads_.z);
    Buffer scratch, out;
    dev.project(dev.wo_input(heads_, scratch), a_.kinds[3], out);
    return out;
  }

  // dLoss/du for the u forward() was given (through Q alone for cross-attention: E is a constant).
  Buffer backward(Device& dev, In u, In dout, typename Device::NormsOut norms) {
    {
      Buffer scratch;
      dev.weight_gradient_early({a_.kinds[3], dev.wo_input(heads_, scratch), dout}, norms);
    }
    Buffer d_o, dz, dq, dk, dv, du;
    dev.back_project(dout, a_.kinds[3], d_o, false);
    if (a_.group) dev.gate_backward(heads_, d_o, dz);
    dev.attend_backward(heads_, d_o, dq, dk, dv);
    dev.mix_values_backward(dv, residual_);
    const In kv = a_.cross ? dev.view(heads_.enc) : u;
    if (a_.group)
      dev.weight_gradients({{a_.kinds[0], u, dev.view(dq)},
                            {a_.kinds[1], kv, dev.view(dk)},
                            {a_.kinds[2], kv, dev.view(dv)},
                            {WeightKind::wga, u, dev.view(dz)}},
                           norms);
    else
      dev.weight_gradients(
          {{a_.kinds[0], u, dev.view(dq)}, {a_.kinds[1], kv, dev.view(dk)}, {a_.kinds[2], kv, dev.view(dv)}},
          norms);
    dev.back_project(dev.view(dq), a_.kinds[0], du, false);
    if (!a_.cross) {
      dev.back_project(dev.view(dk), a_.kinds[1], du, true);
      dev.back_project(dev.view(dv), a_.kinds[2], du, true);
    }
    if (a_.group) dev.back_project(dev.view(dz), WeightKind::wga, du, true);
    dev.release(heads_);
    return du;
  }

  ValueResidual<Buffer>* value_residual() { return a_.cross ? nullptr : &residual_; }
  const Heads& heads() const { return heads_; }

 private:
  AttentionShape a_;
  Heads heads_;
  ValueResidual<Buffer> residual_;
};

}  // namespace normsim::sim
