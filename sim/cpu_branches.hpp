// The two branch kinds on the CPU, forward and backward, for one sample. Each draws its own weights
// from (seed, sample, sublayer, matrix) and keeps what its backward needs.
//   MLP:       h = u W1 (T x H), a = act(h), F = a W2            (SwiGLU: a = silu(u Wgate) * (u W1))
//   attention: Q = u Wq, K = u Wk, V = u Wv; per head A = softmax(Q_h K_h^T / sqrt(d_h)) (causal: s <= t);
//              F = concat_h(A V_h) Wo; Q, K (and V) normalized per head first where sim/head_norms.hpp says.
#pragma once
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "sim/cpu_matrix.hpp"
#include "sim/placement.hpp"
#include "sim/stack.hpp"

namespace normsim::sim {

struct SampleKey {
  std::uint64_t seed;
  std::uint32_t sample;
};

// Frobenius norms of the weight gradients of one sublayer, by WeightKind; NaN where the branch has none.
using WeightGradNorms = std::array<double, kWeightKinds>;

template <class R>
class CpuBranch {
 public:
  virtual ~CpuBranch() = default;
  virtual Mat<R> forward(const Mat<R>& u) = 0;
  // Returns dLoss/du; fills the weight-gradient norms.
  virtual Mat<R> backward(const Mat<R>& dout, WeightGradNorms& norms) = 0;
};

template <class R>
std::unique_ptr<CpuBranch<R>> make_cpu_branch(const StackShape& s, const Placement& p, int k, SampleKey key,
                                              bool qkv_norm);

}  // namespace normsim::sim
