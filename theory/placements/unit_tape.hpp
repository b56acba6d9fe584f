// Internal to theory/: the forward tape of one unit of a block expression (a sublayer, a pair, or a decoder
// layer) over independent parts, shared by the one-stream step (theory/placements/expression.cpp) and the
// lanes' step (theory/placements/lanes.cpp). The model is described at the top of expression.cpp.
#pragma once
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "theory/placements/context.hpp"
#include "theory/pointwise_norm.hpp"
#include "vocab/block_eval.hpp"

namespace normsim::theory::detail {

// The sublayers of one unit: 1, a pair, or a decoder layer's 3 (vocab::unit_size).
constexpr int kUnit = 3;
// The input, a branch output per sublayer, and for pointwise norms the all-ones mean part and one remainder
// per norm (or, backward, their gradients): a unit that needs more is refused.
// The capacity is a template argument: 4 (input + 3 branches) for LayerNorm and RMSNorm, as it always was
// (a larger array made their recursion ~4x slower, bench/theory_bench), kPointwiseParts for DyT and Derf.
constexpr int kNormParts = kUnit + 1;
constexpr int kPointwiseParts = 16;
template <int N>
using Coeffs = std::array<double, N>;

template <int kParts>
void require_capacity(int parts) {
  if (parts >= kParts)
    throw std::invalid_argument("theory::meanfield: a unit of the block needs more than " +
                                std::to_string(kParts) + " independent parts (branches and pointwise norms)");
}

template <int kParts>
struct Node {
  enum class Kind { input, norm, add, scale, branch } kind;
  int a = -1, b = -1;
  double s = 1.0;        // scale factor, or the norm's per-token factor (a pointwise norm's cl)
  int slot = -1;         // branch: which of the unit's branches
  Coeffs<kParts> lin{};  // the value over the independent parts
  TokenGram gram{};  // its Gram (a norm's is computed as normalized() of its input's, as in theory.md §0)
  bool pointwise = false;
  GramMap v{};  // a pointwise norm: the Gram map of its fresh gradient component (D - cl) g
};

// The forward pass of one unit (a sublayer, a pair, or a decoder layer), recorded for the backward pass.
template <int kParts>
struct Tape {
  using Node = detail::Node<kParts>;
  using Value = int;
  StackContext& ctx;
  int k;        // first sublayer of the unit
  int sub = 0;  // which of its sublayers is being evaluated
  std::vector<Node> nodes{};
  std::array<TokenGram, kParts> part{};
  // Random update: each part's first-order change. They are uncorrelated like the parts (a branch's change
  // is linear in its fresh zero-mean last matrix or its move; x_k's is older), so a value's change has the
  // Gram sum_p lin[p]^2 dpart[p]; a norm scales it like the value (its radial part is O(1/d)).
  std::array<TokenGram, kParts> dpart{};
  std::array<Branch::Eval, kUnit> evals{};
  std::array<TokenGram, kUnit> inputs{};
  // Fv (ValueResidualField): per branch slot, whether it is V_1's source, and a mixing branch's map
  // lam^2 back of its edge into dLoss/du_1 (zero elsewhere).
  std::array<bool, kUnit> source{};
  std::array<GramMap, kUnit> edge{GramMap::scale(0.0), GramMap::scale(0.0), GramMap::scale(0.0)};
  int branches = 0;
  int parts = 1;  // parts in use: part 0 is x_k
  int ones = -1;  // the all-ones mean part, once a value has a nonzero mean (pointwise norms only)
  std::array<bool, kParts> raw{};  // a pointwise norm's remainder (or x_k holding one): not Gaussian

  int new_part(TokenGram gram, TokenGram dgram) {
    require_capacity<kParts>(parts);
    part[parts] = gram, dpart[parts] = dgram;
    return parts++;
  }
  double mean(int i) const { return ones >= 0 ? nodes[i].lin[ones] : 0.0; }

  int push(Node n) {
    nodes.push_back(n);
    return static_cast<int>(nodes.size()) - 1;
  }
  TokenGram cross(int i, int j) const {
    TokenGram c;
    for (int p = 0; p < parts; ++p) c = c + (nodes[i].lin[p] * nodes[j].lin[p]) * part[p];
    return c;
  }
  TokenGram change(int i) const {
    TokenGram c;
    for (int p = 0; p < parts; ++p) c = c + (nodes[i].lin[p] * nodes[i].lin[p]) * dpart[p];
    return c;
  }
  [[gnu::noinline]] int norm(int a) {
    if (vocab::is_pointwise(ctx.spec.norm)) return pointwise_norm(a);
    const TokenGram in = nodes[a].gram;
    Node n{Node::Kind::norm, a};
    n.s = std::sqrt(ctx.gamma_sq / (in.diag + ctx.eps));
    for (int p = 0; p < parts; ++p) n.lin[p] = n.s * nodes[a].lin[p];
    n.gram = normalized(in, ctx.gamma_sq, ctx.eps);
    return push(n);
  }
  // y = gamma f(alpha x + shift) (see the top of this file).
  // The operations below are not inlined into the expression walk (vocab/block_eval.hpp), whose recursion is
  // as deep as the expression (about 2,000 levels for the longest 4,096-byte block): their locals in every
  // frame took the fuzz test past an 8 MB stack under ASan.
  [[gnu::noinline]] int pointwise_norm(int a) {
    const vocab::ScalarEnv env = scalar_env(ctx, k + sub);
    const double alpha = vocab::eval_scalar(ctx.norm_alpha, ctx.norm_alpha.root, env);
    const double shift = vocab::eval_scalar(ctx.norm_shift, ctx.norm_shift.root, env);
    const double mu = mean(a), gain = ctx.spec.gamma;
    for (int p = 0; p < parts; ++p)
      if (raw[p] && nodes[a].lin[p] != 0.0) refuse_non_gaussian();
    if (mu != 0.0) refuse_non_gaussian();
    const TokenGram centered = nodes[a].gram + (-mu * mu) * TokenGram{1.0, 1.0};
    const PointwiseMoments m =
        pointwise_moments(ctx.spec.norm, alpha, shift + alpha * mu, centered.diag, centered.off);
    Node n{Node::Kind::norm, a};
    n.pointwise = true;
    n.s = gain * alpha * m.d1;
    const double ga2 = gain * gain * alpha * alpha;
    n.v = GramMap{ga2 * (m.d2 - m.d1 * m.d1), 0.0, 0.0, ga2 * (m.dd - m.d1 * m.d1)};
    const double out_mean = gain * m.f1;
    if (ones < 0 && out_mean != 0.0) ones = new_part({1.0, 1.0}, {});
    for (int p = 0; p < parts; ++p) n.lin[p] = p == ones ? out_mean : n.s * nodes[a].lin[p];
    n.gram = {gain * gain * m.f2, gain * gain * m.ff};
    TokenGram rest = n.gram + (-out_mean * out_mean) * TokenGram{1.0, 1.0} + (-n.s * n.s) * centered;
    if (rest.diag < 0.0) rest.diag = 0.0;  // rounding of a near-linear norm
    const TokenGram drest = ctx.change.empty() ? TokenGram{} : n.v(change(a));
    const int r = new_part(rest, drest);
    n.lin[r] = 1.0, raw[r] = true;
    return push(n);
  }
  [[gnu::noinline]] int add(int a, int b) {
    Node n{Node::Kind::add, a, b};
    for (int p = 0; p < parts; ++p) n.lin[p] = nodes[a].lin[p] + nodes[b].lin[p];
    n.gram = nodes[a].gram + nodes[b].gram + 2.0 * cross(a, b);
    if (n.gram.diag < 0.0) n.gram.diag = 0.0;  // x - x: a cancellation's rounding, not a negative moment
    return push(n);
  }
  [[gnu::noinline]] int scale(int a, double s) {
    Node n{Node::Kind::scale, a};
    n.s = s;
    for (int p = 0; p < parts; ++p) n.lin[p] = s * nodes[a].lin[p];
    n.gram = (s * s) * nodes[a].gram;
    return push(n);
  }
  [[gnu::noinline]] int branch(int u, bool qkv_norm) {
    const Branch& own = ctx.branch(k + sub);
    const Branch& f = qkv_norm && own.kind() == Branch::Kind::attention ? ctx.branch_qkv(k + sub) : own;
    Node n{Node::Kind::branch, u};
    n.slot = branches++;
    evals[n.slot] = f.evaluate(nodes[u].gram);
    inputs[n.slot] = nodes[u].gram;
    TokenGram dout{};
    if (!ctx.change.empty()) {
      const Branch::Tangent tan = f.tangent(inputs[n.slot], evals[n.slot]);
      dout = tan.map(change(u)) + ctx.update_sq * tan.moved;
    }
    n.lin[new_part(evals[n.slot].out, dout)] = 1.0;
    n.gram = evals[n.slot].out;
    const int out = push(n);
    const double s = branch_scale_at(ctx, k + sub);
    return s == 1.0 ? out : scale(out, s);
  }
  // Fv(u, lam): an MLP is F; the first attention is F and V_1's source; a later one is attention at the input
  // Gram (1 - lam)^2 Gram(u) + lam^2 Gram(u_1) (its output Gram is linear in it), whose backward reaches u
  // times (1 - lam)^2 and u_1 times lam^2 (ValueResidualField).
  [[gnu::noinline]] int branch_value(int u, double lam) {
    const Branch& f = ctx.branch(k + sub);
    if (f.is_mlp()) return branch(u, false);
    if (f.kind() != Branch::Kind::attention)
      throw std::invalid_argument("theory::meanfield: Fv mixes self-attention values; sublayer " +
                                  std::to_string(k + sub) + " is a cross-attention");
    ValueResidualField& v = ctx.value_residual;
    if (!v.seen) {
      v.seen = true, v.source_unit = k, v.first_in = nodes[u].gram;
      source[std::size_t(branches)] = true;
      return branch(u, false);
    }
    if (v.source_unit == k)
      throw std::invalid_argument(
          "theory::meanfield: Fv mixes V_1 into a sublayer of V_1's own unit; its mean field (an edge inside "
          "the unit) is not implemented");
    const double own = (1.0 - lam) * (1.0 - lam);
    Node n{Node::Kind::branch, u};
    n.slot = branches++;
    evals[n.slot] = f.evaluate(own * nodes[u].gram + (lam * lam) * v.first_in);
    edge[n.slot] = (lam * lam) * evals[n.slot].back;
    evals[n.slot].back = own * evals[n.slot].back;
    inputs[n.slot] = nodes[u].gram;
    n.lin[new_part(evals[n.slot].out, {})] = 1.0;
    n.gram = evals[n.slot].out;
    const int out = push(n);
    const double s = branch_scale_at(ctx, k + sub);
    return s == 1.0 ? out : scale(out, s);
  }
};

}  // namespace normsim::theory::detail
