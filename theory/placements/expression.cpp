// The mean field of a block expression (vocab/block_expr.hpp), for every placement but Admin. At
// initialization each branch output is independent of everything before it given its input (its last
// weight matrix is zero-mean and fresh), and a norm rescales each token by gamma / sqrt(s^2 + eps)
// (infinite width, theory.md §0). So every value of a sublayer (or pair) is a linear combination of
// independent components: its input x_k and the branch outputs, whose Grams add with squared
// coefficients. Backward, by the gradient-independence assumption, the gradient at every value is likewise
// a combination of the gradient at the output and one fresh component per branch (F's backward map applied
// to the gradient at its output); its Gram is a linear map of the output's gradient Gram.
#include <array>
#include <cmath>
#include <vector>

#include "theory/placements/context.hpp"
#include "vocab/block_eval.hpp"

namespace normsim::theory::detail {
namespace {

// The sublayers of one unit: 1, a pair, or a decoder layer's 3 (vocab::unit_size).
constexpr int kUnit = 3;
constexpr int kParts =
    kUnit + 1;  // the input and a branch output per sublayer (or, backward, their gradients)
using Coeffs = std::array<double, kParts>;

struct Node {
  enum class Kind { input, norm, add, scale, branch } kind;
  int a = -1, b = -1;
  double s = 1.0;    // scale factor, or the norm's per-token factor
  int slot = -1;     // branch: which of the unit's branches
  Coeffs lin{};      // the value over the independent parts
  TokenGram gram{};  // its Gram (a norm's is computed as normalized() of its input's, as in theory.md §0)
};

// The forward pass of one unit (a sublayer, a pair, or a decoder layer), recorded for the backward pass.
struct Tape {
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
  int branches = 0;

  int push(Node n) {
    nodes.push_back(n);
    return static_cast<int>(nodes.size()) - 1;
  }
  TokenGram cross(int i, int j) const {
    TokenGram c;
    for (int p = 0; p < kParts; ++p) c = c + (nodes[i].lin[p] * nodes[j].lin[p]) * part[p];
    return c;
  }
  TokenGram change(int i) const {
    TokenGram c;
    for (int p = 0; p < kParts; ++p) c = c + (nodes[i].lin[p] * nodes[i].lin[p]) * dpart[p];
    return c;
  }
  int norm(int a) {
    const TokenGram in = nodes[a].gram;
    Node n{Node::Kind::norm, a};
    n.s = std::sqrt(ctx.gamma_sq / (in.diag + ctx.eps));
    for (int p = 0; p < kParts; ++p) n.lin[p] = n.s * nodes[a].lin[p];
    n.gram = normalized(in, ctx.gamma_sq, ctx.eps);
    return push(n);
  }
  int add(int a, int b) {
    Node n{Node::Kind::add, a, b};
    for (int p = 0; p < kParts; ++p) n.lin[p] = nodes[a].lin[p] + nodes[b].lin[p];
    n.gram = nodes[a].gram + nodes[b].gram + 2.0 * cross(a, b);
    if (n.gram.diag < 0.0) n.gram.diag = 0.0;  // x - x: a cancellation's rounding, not a negative moment
    return push(n);
  }
  int scale(int a, double s) {
    Node n{Node::Kind::scale, a};
    n.s = s;
    for (int p = 0; p < kParts; ++p) n.lin[p] = s * nodes[a].lin[p];
    n.gram = (s * s) * nodes[a].gram;
    return push(n);
  }
  int branch(int u, bool qkv_norm) {
    const Branch& own = ctx.branch(k + sub);
    const Branch& f = qkv_norm && own.kind() == Branch::Kind::attention ? ctx.attention_qkv : own;
    Node n{Node::Kind::branch, u};
    n.slot = branches++;
    evals[n.slot] = f.evaluate(nodes[u].gram);
    inputs[n.slot] = nodes[u].gram;
    part[1 + n.slot] = evals[n.slot].out;
    if (!ctx.change.empty()) {
      const Branch::Tangent tan = f.tangent(inputs[n.slot], evals[n.slot]);
      dpart[1 + n.slot] = tan.map(change(u)) + ctx.update_sq * tan.moved;
    }
    n.lin[1 + n.slot] = 1.0;
    n.gram = evals[n.slot].out;
    const int out = push(n);
    const double s = branch_scale_at(ctx, k + sub);
    return s == 1.0 ? out : scale(out, s);
  }
};

// The Gram map of a gradient combination: sum of squared coefficients times each part's map.
GramMap gram_map(const Coeffs& c, const std::array<GramMap, kParts>& maps) {
  GramMap m = GramMap::scale(0.0);
  for (int p = 0; p < kParts; ++p)
    if (c[p] != 0.0) m = m + (c[p] * c[p]) * maps[p];
  return m;
}

// Reverse pass over the tape from the unit's output: each sublayer's map from grad(x_{k+span}) to its own
// input gradient, and each branch's map to the gradient at its raw output.
void backward(StackContext& ctx, const Tape& t, const std::array<int, kUnit>& outs, int span) {
  std::vector<Coeffs> grad(t.nodes.size(), Coeffs{});
  std::array<GramMap, kParts> maps;
  maps.fill(GramMap::identity());
  int parts = 1;
  grad[outs[span - 1]][0] = 1.0;
  const int anchor = t.k + span;
  for (int i = static_cast<int>(t.nodes.size()) - 1; i >= 0; --i) {
    const Node& n = t.nodes[i];
    const Coeffs g = grad[i];
    for (int j = 0; j + 1 < span; ++j)
      if (i == outs[j]) ctx.rec(t.k + j + 1).back = gram_map(g, maps);
    switch (n.kind) {
      case Node::Kind::input:
        break;
      case Node::Kind::add:
        for (int p = 0; p < kParts; ++p) grad[n.a][p] += g[p], grad[n.b][p] += g[p];
        break;
      case Node::Kind::norm:
      case Node::Kind::scale:
        for (int p = 0; p < kParts; ++p) grad[n.a][p] += n.s * g[p];
        break;
      case Node::Kind::branch: {
        SublayerRecord& r = ctx.rec(t.k + n.slot);
        r.anchor_f = anchor, r.to_branch = gram_map(g, maps);
        maps[parts] = t.evals[n.slot].back * r.to_branch;
        grad[n.a][parts++] += 1.0;
        break;
      }
    }
  }
  ctx.rec(t.k).back = gram_map(grad[0], maps);
  for (int j = 0; j < span; ++j) ctx.rec(t.k + j).anchor = anchor;
}

}  // namespace

vocab::ScalarEnv scalar_env(const StackContext& ctx, int k) {
  vocab::ScalarEnv env;
  const StackSpec& s = ctx.spec;
  env.k = k, env.K = s.depth, env.b = block_of(s, k), env.L = block_count(s);
  env.attention = !ctx.branch(k).is_mlp();
  env.param = [&s](const std::string& name) { return parameter(s, name); };
  return env;
}

double branch_scale_at(const StackContext& ctx, int k) {
  return vocab::eval_scalar(ctx.branch_scale, ctx.branch_scale.root, scalar_env(ctx, k));
}

int step_expression(StackContext& ctx, int k) {
  const int span = vocab::unit_size(ctx.block, ctx.spec.sublayer);
  Tape t{ctx, k};
  t.part[0] = ctx.x(k);
  const bool tracks_change = !ctx.change.empty();
  if (tracks_change) t.dpart[0] = ctx.change[k];
  Node in{Node::Kind::input};
  in.lin[0] = 1.0, in.gram = ctx.x(k);
  const int input = t.push(in);
  std::array<int, kUnit> outs{-1, -1, -1};
  int x = input;
  for (int j = 0; j < span; ++j) {
    t.sub = j;
    const vocab::Expr& e = ctx.block.sublayers[vocab::expression_at(ctx.block, span, j)];
    outs[j] = vocab::eval_stream(e, e.root, t, scalar_env(ctx, k + j), x, input);
    ctx.x(k + j + 1) = t.nodes[outs[j]].gram;
    if (tracks_change) ctx.change[k + j + 1] = t.change(outs[j]);
    SublayerRecord& r = ctx.rec(k + j);
    r.set_branch(t.inputs[j], t.evals[j]);
    r.cross = t.cross(x, outs[j]).diag;
    x = outs[j];
  }
  backward(ctx, t, outs, span);
  return span;
}

}  // namespace normsim::theory::detail
