// Internal to theory/: the mean-field state a placement step reads and writes, and the few residual
// shapes that the placements share. A step maps x_k (and for paired placements x_{k+1}) forward, and
// records for the backward pass the linear maps from a later layer's gradient Gram to this layer's.
#pragma once
#include <cmath>
#include <cstddef>
#include <memory>
#include <new>
#include <vector>

#include "theory/branch_model.hpp"
#include "theory/placements/lane_gram.hpp"
#include "theory/stack_spec.hpp"
#include "theory/token_gram.hpp"
#include "vocab/block_eval.hpp"
#include "vocab/block_expr.hpp"
#include "vocab/sublayer_layout.hpp"

namespace normsim::theory::detail {

// Only what the backward pass and the metrics read (128 bytes: the records of a 10^4-sublayer stack stay
// near the L2 cache). A step writes every field of its record.
struct SublayerRecord {
  TokenGram branch_in;      // Gram of F_k's input
  Branch::Factors factors;  // F_k at that input, for the weight gradients (MLP)
  double branch_sq = 0.0;   // Gram diagonal of F_k's raw output
  double cross = 0.0;       // x_k . x_{k+1} / d, per token
  int anchor = 0;           // grad(x_k) = back(grad(x_anchor))
  int anchor_f = 0;         // grad at F_k's raw output = to_branch(grad(x_anchor_f))
  GramMap back;
  GramMap to_branch;

  void set_branch(TokenGram in, const Branch::Eval& e) {
    branch_in = in, factors = e.factors, branch_sq = e.out.diag;
  }
};

// Everything the driver keeps per layer, in one array: one allocation per profile, and the stream, record
// and gradient of a layer share cache lines.
struct Layer {
  TokenGram x;         // the stream's Gram at layer l = 0..K
  TokenGram g;         // the gradient's Gram at layer l (backward pass)
  SublayerRecord rec;  // sublayer k = l, for l < K
};

// Storage for the layers, left uninitialized: the forward pass writes every x and every record field
// that is read later (the steps write whole records; the overflow fill writes what the metrics read past
// an overflow), the backward pass every g. Layer is an implicit-lifetime aggregate, so the storage from
// operator new holds Layer objects without a constructor call; skipping the zero-fill saves a pass over
// ~1.6 MB at 10^4 sublayers.
class LayerStorage {
 public:
  explicit LayerStorage(int n) : p_(static_cast<Layer*>(::operator new(sizeof(Layer) * std::size_t(n)))) {}
  Layer& operator[](int l) { return p_.get()[l]; }

 private:
  struct Free {
    void operator()(Layer* p) const { ::operator delete(p); }
  };
  std::unique_ptr<Layer, Free> p_;
};

// ResFormer's value residual (Fv; docs/theory_notes.md "Value residual" [DERIVED]). Forward: V_1 = u_1
// W_V^(1) and V_n = u_n W_V^(n) have independent zero-mean weights, so Gram((1 - lam) V_n + lam V_1) is
// sigma_V^2 [(1 - lam)^2 Gram(u_n) + lam^2 Gram(u_1)]: attention evaluated at that input Gram. Backward:
// dLoss/du_1 gains lam P^T dO_n W_O^(n)T W_V^(1)T from each mixing sublayer n, fresh in W_O^(n): Grams add.
struct ValueResidualField {
  bool seen = false;     // V_1's source (the first Fv on an attention) has run
  int source_unit = -1;  // the first sublayer of its unit
  TokenGram first_in;    // Gram of the source's branch input u_1
  // Per sublayer (sized depth when the block calls Fv): a mixing sublayer's edge into dLoss/du_1, the map
  // lam^2 back * to_branch of the gradient Gram at x_{edge_anchor[k]} (edge_anchor -1: no edge); and the
  // coefficient^2 with which dLoss/du_1 reaches x_k (0 outside the source's unit).
  std::vector<int> edge_anchor;
  std::vector<GramMap> edge;
  std::vector<double> source_coeff_sq;
};

// The branches of one set of gains (theory/meanfield.cpp's branches_of).
struct BranchSet {
  Branch mlp, attention, attention_qkv, cross;
};

// A block of n > 1 lanes, or one that reads emb (docs/design/multistream.md 3.4): the m = n (+ 1 for emb)
// values carried between units. Empty (m() == 0) for every other block.
struct LaneState {
  int n = 1;                           // lanes
  bool emb = false;                    // whether emb is carried, as value n
  std::vector<LaneGram> x;             // l = 0..K: the joint Gram of x_l's values
  std::vector<LaneRecord> rec;         // at the first sublayer k of each unit: its backward
  std::vector<TokenGram> branch_grad;  // per sublayer: the Gram of the gradient at F_k's raw output
  int m() const { return x.empty() ? 0 : n + (emb ? 1 : 0); }
};

struct StackContext {
  const StackSpec& spec;
  double gamma_sq;
  double eps;  // spec.eps: the norms' epsilon
  Branch mlp, attention;
  LayerStorage layers;          // l = 0..K
  double admin_omega_sq = 1.0;  // Admin's omega_k^2, accumulated in the forward pass
  Branch attention_qkv;      // attention with per-head norms of Q, K, V (Fqkv): the V-norm is in the branch
  vocab::Block block;        // the placement's expression (every placement but Admin)
  vocab::Expr branch_scale;  // multiplies every branch output
  Branch cross;              // the decoder's cross-attention (theory/cross_attention.hpp)
  // A random update of relative size s (update_sq = s^2; 0: none): change[l] is the Gram of x_l's
  // first-order change, l = 0..K, carried forward through the same expression (docs/theory_notes.md
  // "Output change under a random update"). Empty when there is no update.
  double update_sq = 0.0;
  std::vector<TokenGram> change;
  // DyT / Derf (spec.norm pointwise; docs/theory_notes.md "Pointwise norms" [DERIVED]): the alpha and shift
  // expressions of the norms of sublayer k, and mean[l], the per-coordinate mean of x_l (a Derf with a
  // shift leaves one; the same in every coordinate and token). Empty for LayerNorm and RMSNorm.
  vocab::Expr norm_alpha, norm_shift;
  std::vector<double> mean;
  // raw[l]: x_l holds a pointwise norm's output (its remainder part: bounded, not Gaussian).
  std::vector<unsigned char> raw;
  // Per sublayer, under a parametrization whose gains vary with k (spec.sigma_sq_per_layer); empty: the
  // branches above at every sublayer.
  std::vector<BranchSet> per_layer;
  ValueResidualField value_residual;  // a block with Fv
  // Lanes or emb: their joint Gram; x(l) then holds the lanes' mean (the simulator's stream[l]).
  LaneState lanes;

  TokenGram& x(int l) { return layers[l].x; }
  TokenGram& g(int l) { return layers[l].g; }
  SublayerRecord& rec(int k) { return layers[k].rec; }

  const Branch& branch(int k) const {
    const bool own = !per_layer.empty();
    switch (vocab::layout(spec.sublayer).branch_at(k)) {
      case vocab::BranchKind::mlp:
        return own ? per_layer[std::size_t(k)].mlp : mlp;
      case vocab::BranchKind::attention:
        return own ? per_layer[std::size_t(k)].attention : attention;
      case vocab::BranchKind::cross_attention:
        return own ? per_layer[std::size_t(k)].cross : cross;
    }
    return mlp;
  }
  // Attention with per-head norms of Q, K, V (Fqkv) at sublayer k.
  const Branch& branch_qkv(int k) const {
    return per_layer.empty() ? attention_qkv : per_layer[std::size_t(k)].attention_qkv;
  }
};

// A norm N(x) = gamma x / sqrt(s^2 + eps) of an input with per-token second moment s^2 = in.diag keeps
// cosines and outputs the second moment gamma^2 s^2 / (s^2 + eps): gamma^2, the sphere of radius
// gamma sqrt(d), as eps -> 0 (theory.md §0; docs/theory_notes.md §eps [DERIVED]). eps == 0 computes the
// eps -> 0 expression itself, bit for bit.
inline TokenGram normalized(TokenGram in, double gamma_sq, double eps) {
  // One expression for both cases (the eps == 0 one is the old {gamma^2, gamma^2 cos}), so that the
  // compiler contracts the caller's sums with this product exactly as before.
  // eps == 0: a zero input stays zero (the simulator's N(0) is 0 forward) and a NaN stays NaN.
  const double out = eps == 0.0 ? (in.diag > 0.0    ? gamma_sq
                                   : in.diag == 0.0 ? 0.0
                                                    : in.diag)
                                : gamma_sq * in.diag / (in.diag + eps);
  return {out, out * in.cos()};
}

// The norm's backward map on both Gram entries, gamma^2 / (s^2 + eps) (infinite width; s^2 + 0 == s^2, so
// eps == 0 gives gamma^2 / s^2 exactly).
inline double norm_jacobian(double gamma_sq, double in_sq, double eps) {
  return gamma_sq / (in_sq + eps);
}

// The per-token cross moment x . N(x) / d = gamma s^2 / sqrt(s^2 + eps) (gamma s as eps -> 0).
inline double norm_cross(double gamma_sq, double in_sq, double eps) {
  if (eps == 0.0) return std::sqrt(gamma_sq * in_sq);
  return std::sqrt(gamma_sq) * in_sq / std::sqrt(in_sq + eps);
}

// What the numbers of the expression read at sublayer k (vocab/block_eval.hpp).
vocab::ScalarEnv scalar_env(const StackContext& ctx, int k);
// branch_scale at sublayer k: what multiplies F_k's output, in every placement's step.
double branch_scale_at(const StackContext& ctx, int k);

// Throws std::invalid_argument: a pointwise norm whose input holds an earlier pointwise norm's output
// (theory/placements/expression.cpp).
[[noreturn]] void refuse_non_gaussian();

// The mean field of the placement's expression over one unit (a sublayer, or a pair); returns its span.
int step_expression(StackContext& ctx, int k);
// The same for a block of lanes or one that reads emb (theory/placements/lanes.cpp); start_lanes() sets x_0's
// values (copies of x_0) when the block needs them, backward_lanes() every g(l) from g(K), the readout's.
int step_lanes(StackContext& ctx, int k);
void start_lanes(StackContext& ctx);
void backward_lanes(StackContext& ctx);
// Admin (code, not an expression: omega is measured): x_{k+1} = N(omega x_k + F_k(x_k)).
int step_admin(StackContext& ctx, int k);

}  // namespace normsim::theory::detail
