// The two branch kinds on the CPU, forward and backward, for one sample. Each draws its weights from
// (seed, sample, sublayer, matrix) into the workspace when it uses them, forward and again backward
// (Philox makes the redraw exact), or once where the workspace keeps them (CpuWorkspace::keep_weights), and
// keeps only the activations its backward needs (sim/cpu/weight_source.hpp). Both are written once for every
// device (sim/mlp_branch.hpp, sim/attention_branch.hpp) and run here by the CPU devices
// (sim/cpu/cpu_mlp_device.hpp, sim/cpu/cpu_attention_device.hpp).
//   MLP:       h = u W1 (T x H), a = act(h), F = a W2            (SwiGLU: a = silu(u Wgate) * (u W1))
//   attention: Q = u Wq, K = u Wk, V = u Wv; per head A = softmax(Q_h K_h^T / sqrt(d_h)) (causal: s <= t);
//              F = concat_h(A V_h) Wo; Q, K (and V) normalized per head first where sim/head_norms.hpp says;
//              with attention_gate, F = (concat_h(A V_h) * sigmoid(u Wga)) Wo (sim/attention_gate.hpp).
//   cross-attention (decoder): the same with K = E Wk, V = E Wv, E the fixed encoder output
//              (sim/encoder_output.hpp), no mask; matrices cq, ck, cv, co.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "sim/branch_hooks.hpp"
#include "sim/cpu/cpu_parallel.hpp"
#include "sim/cpu/update_hooks.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/placement.hpp"
#include "sim/stack.hpp"
#include "sim/value_residual.hpp"

namespace normsim::sim {

template <class R>
class CpuBranch {
 public:
  virtual ~CpuBranch() = default;
  virtual Mat<R> forward(const Mat<R>& u, CpuWorkspace<R>& ws) = 0;
  // Returns dLoss/du for the u forward() was given; fills the weight-gradient norms.
  virtual Mat<R> backward(const Mat<R>& u, const Mat<R>& dout, CpuWorkspace<R>& ws,
                          WeightGradNorms& norms) = 0;
  // A self-attention's part in the value residual (Fv); null for every other branch.
  virtual ValueResidual<Mat<R>>* value_residual() { return nullptr; }
  // V as the heads read it (after forward; a self-attention's, else throws std::logic_error).
  virtual const Mat<R>& values() const { throw std::logic_error("Fv: this branch has no values"); }
};

// A routed MLP (moe_experts > 0) is made by sim/cpu/cpu_moe.hpp from experts that are this MLP: expert e
// draws its matrices as WeightId{kind, e}. No update hooks: validate() refuses a parameter update with
// experts.
template <class R>
std::unique_ptr<CpuBranch<R>> make_cpu_mlp(const StackShape& s, const Placement& p, int k, SampleKey key,
                                           std::uint32_t expert);

template <class R>
std::unique_ptr<CpuBranch<R>> make_cpu_branch(const StackShape& s, const Placement& p, int k, SampleKey key,
                                              bool qkv_norm, UpdateHooks<R> hooks = {});

}  // namespace normsim::sim
