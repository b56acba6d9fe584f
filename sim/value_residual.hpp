// ResFormer's value residual (Zhou et al., arXiv 2410.17897) as an attention branch takes part in it, on any
// device (Buffer: a host matrix or a device buffer). Official code, Zcchill/Value-Residual-Learning @95652f6
// src/modeling/modeling_llama_resformer.py l.377-381: layer 0 keeps its value states, every later layer uses
// 0.5 V_1 + 0.5 V_n; modded-nanogpt e59ae87f train_gpt2.py l.174-176: (1 - lam) V + lam V_1, lam learnable
// (0.5 at init). Mixed after the value projection, before the heads read V.
#pragma once
#include <stdexcept>
#include <utility>

namespace normsim::sim {

template <class Buffer>
struct ValueResidual {
  // Forward, this branch mixing V_1 in: V <- (1 - lam) V + lam V_1 (first: V_1 until forward has read it).
  const Buffer* first = nullptr;
  double lam = 0.0;
  bool mixes = false;
  // Backward of V_1's source: dLoss/dV from the branches that mixed it in (empty: none), added to its own.
  Buffer extra_grad;
  // Backward of a branch that mixes: dLoss/dV_1 = lam dLoss/dV_mixed, handed to V_1's source.
  Buffer first_grad;
};

// Branch br's part in the value residual (its value_residual()); throws where it has none: the tape asks
// only self-attentions.
template <class Branch>
auto& value_residual_of(Branch& br) {
  auto* v = br.value_residual();
  if (!v) throw std::logic_error("Fv: this branch has no values to mix");
  return *v;
}

// The tape device's steps of the value residual (CPU and CUDA alike): before forward, mix V_1 into br's
// values; before backward, add dLoss/dV from later mixing; after it, take dLoss/dV_1.
template <class Branch, class Buffer>
void mix_values_into(Branch& br, const Buffer& first, double lam) {
  auto& v = value_residual_of(br);
  v.first = &first, v.lam = lam, v.mixes = true;
}
template <class Branch, class Buffer>
Buffer take_values_grad(Branch& br) {
  Buffer g = std::move(value_residual_of(br).first_grad);
  value_residual_of(br).first_grad = Buffer();
  return g;
}

}  // namespace normsim::sim
