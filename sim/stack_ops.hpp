// The operations a placement may apply to the residual stream. Placements are written once against this
// interface; each backend implements it (and differentiates it). A Value is a T x d activation of every
// sample the backend runs at once; Scalars hold one number per such sample.
#pragma once
#include <vector>

#include "sim/pointwise_norm.hpp"

namespace normsim::sim {

struct Value {
  int id = -1;
  bool valid() const { return id >= 0; }
};
using Scalars = std::vector<double>;
// The matrices at the stack's edges (sim/edges.hpp): the embedding W_emb before x_0, the readout W_out
// after the output y.
enum class Edge { embedding = 0, readout = 1 };
inline constexpr int kEdges = 2;

class StackOps {
 public:
  virtual ~StackOps() = default;
  virtual int batch() const = 0;  // samples per Value
  // The configured norm (gain norm_gain); `at`: its alpha and shift where the norm is dyt or derf
  // (sim/norm_site.hpp says which a norm of sublayer k and the final norm take).
  virtual Value norm(Value x, NormAt at) = 0;
  virtual Value add(Value a, Value b) = 0;             // a + b
  virtual Value scale(Value a, const Scalars& s) = 0;  // a * s (per sample)
  Value scale(Value a, double s) { return scale(a, Scalars(batch(), s)); }
  // F_k(u): the branch of sublayer k. qkv_norm: per-head RMSNorm of Q, K and V (HybridNorm).
  virtual Value branch(int k, Value u, bool qkv_norm = false) = 0;
  // a W_e: the embedding's input u to x_0, or the output y to the logits z (sim/edges.hpp). A Value here may
  // be u (T x input_width or vocab) or z (T x output_width), the only ones not T x d.
  virtual Value project(Value a, Edge e) = 0;
  // F_k(u) with ResFormer's value residual (Fv; docs/theory_notes.md "Value residual"): attention whose
  // values are (1 - lam) V + lam V_1. `first` is V_1 on this tape; invalid at the first such call, which runs
  // F_k and sets `first` to its V (a Value whose gradient flows back into F_k's V). An MLP branch is F_k.
  virtual Value branch_value(int k, Value u, double lam, Value& first) = 0;
  // mean of a^2 per sample, measured and then treated as a constant (no gradient): Admin's profiling.
  virtual Scalars mean_sq(Value a) = 0;
};

}  // namespace normsim::sim
