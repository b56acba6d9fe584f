// The mean field of a block expression (vocab/block_expr.hpp), for every placement but Admin. At
// initialization each branch output is independent of everything before it given its input (its last
// weight matrix is zero-mean and fresh), and a norm rescales each token by gamma / sqrt(s^2 + eps)
// (infinite width, theory.md §0). So every value of a sublayer (or pair) is a linear combination of
// independent components: its input x_k and the branch outputs, whose Grams add with squared
// coefficients. Backward, by the gradient-independence assumption, the gradient at every value is likewise
// a combination of the gradient at the output and one fresh component per branch (F's backward map applied
// to the gradient at its output); its Gram is a linear map of the output's gradient Gram.
//
// A pointwise norm (DyT, Derf: y = gamma f(alpha x + shift), docs/theory_notes.md "Pointwise norms"
// [DERIVED]) is not a rescaling. With its input taken Gaussian, Stein's lemma splits its output into
// M 1 + cl (x - mu 1) + r: the mean M = gamma E f(u) (a part of its own, the all-ones vector, Gram {1, 1}),
// the projection on the input's parts cl = gamma alpha E f'(u), and a remainder r uncorrelated with every
// part, a new part with Gram Gram(y) - M^2 {1, 1} - cl^2 Gram(x - mu 1). Backward, D g = cl g + (D - cl) g
// with D = diag(gamma alpha f'(u)): the second term is a new gradient component with Gram map
// V o (the map of g), V = {Var d, 0, 0, Cov(d_t, d_s)}.
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "theory/placements/context.hpp"
#include "theory/pointwise_norm.hpp"
#include "vocab/block_eval.hpp"

namespace normsim::theory::detail {
namespace {

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

}  // namespace

// A pointwise norm's input that holds an earlier pointwise norm's output (Post-LN, Peri-LN, OLMo-2, DeepNorm,
// ...): bounded, not Gaussian, so the Gaussian expectations are a closure, not the infinite-width limit.
// Measured against the simulator (d = 256, MLP relu, 16 samples): Post-LN Derf at alpha 0.6, shift 0 missed
// act_sq by 7 % (7 se) at K = 8, at shift 0.2 act_sq by 5 % and grad_sq by 16 % (6 se) at K = 4; Post-LN DyT
// at alpha 0.5 stayed within 2.8 se only because its inputs are small. Refused rather than predicted wrongly.
[[noreturn]] void refuse_non_gaussian() {
  throw std::invalid_argument(
      "theory::StackSpec.norm: a pointwise norm reads an earlier pointwise norm's output (e.g. Post-LN, "
      "Peri-LN): "
      "not Gaussian, so its mean field (Gaussian expectations) is not covered");
}

namespace {

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

// The Gram map of a gradient combination: sum of squared coefficients times each part's map.
template <std::size_t N>
GramMap gram_map(const std::array<double, N>& c, const std::array<GramMap, N>& maps) {
  GramMap m = GramMap::scale(0.0);
  for (std::size_t p = 0; p < N; ++p)
    if (c[p] != 0.0) m = m + (c[p] * c[p]) * maps[p];
  return m;
}

// Fv's edges in the unit's reverse pass (ValueResidualField): a mixing branch records its edge into
// dLoss/du_1 (lam^2 back after to_branch, from the gradient at x_anchor); V_1's source lets dLoss/du_1 enter
// its input as a part of its own, `side`, whose map is zero here (it is no function of grad(x_anchor)).
template <int kParts, class Node>
void value_residual_edges(StackContext& ctx, const Tape<kParts>& t, const Node& n, const SublayerRecord& r,
                          int anchor, std::vector<Coeffs<kParts>>& grad, std::array<GramMap, kParts>& maps,
                          int& parts, int& side) {
  ValueResidualField& v = ctx.value_residual;
  if (v.edge.empty()) return;
  const std::size_t k = std::size_t(t.k + n.slot);
  if (!t.source[std::size_t(n.slot)]) {
    v.edge_anchor[k] = anchor;
    v.edge[k] = t.edge[std::size_t(n.slot)] * r.to_branch;
    return;
  }
  require_capacity<kParts>(parts);
  maps[parts] = GramMap::scale(0.0);
  side = parts++;
  grad[n.a][side] += 1.0;
}

// How dLoss/du_1 (the part `side`) reaches the unit's input and its inner outputs: coefficient^2 per layer.
template <int kParts>
void record_side(StackContext& ctx, const Tape<kParts>& t, const std::array<int, kUnit>& outs, int span,
                 const std::vector<Coeffs<kParts>>& grad, int side) {
  std::vector<double>& c = ctx.value_residual.source_coeff_sq;
  const double in = grad[0][std::size_t(side)];
  c[std::size_t(t.k)] = in * in;
  for (int j = 0; j + 1 < span; ++j) {
    const double at = grad[std::size_t(outs[j])][std::size_t(side)];
    c[std::size_t(t.k + j + 1)] = at * at;
  }
}

// Reverse pass over the tape from the unit's output: each sublayer's map from grad(x_{k+span}) to its own
// input gradient, and each branch's map to the gradient at its raw output.
template <int kParts>
void backward(StackContext& ctx, const Tape<kParts>& t, const std::array<int, kUnit>& outs, int span) {
  using Node = detail::Node<kParts>;
  std::vector<Coeffs<kParts>> grad(t.nodes.size(), Coeffs<kParts>{});
  std::array<GramMap, kParts> maps;
  maps.fill(GramMap::identity());
  int parts = 1;
  int side = -1;  // the part of dLoss/du_1 entering at V_1's source (Fv), if this unit holds it
  grad[outs[span - 1]][0] = 1.0;
  const int anchor = t.k + span;
  for (int i = static_cast<int>(t.nodes.size()) - 1; i >= 0; --i) {
    const Node& n = t.nodes[i];
    const Coeffs<kParts> g = grad[i];
    for (int j = 0; j + 1 < span; ++j)
      if (i == outs[j]) ctx.rec(t.k + j + 1).back = gram_map(g, maps);
    switch (n.kind) {
      case Node::Kind::input:
        break;
      case Node::Kind::add:
        for (int p = 0; p < parts; ++p) grad[n.a][p] += g[p], grad[n.b][p] += g[p];
        break;
      case Node::Kind::norm:
      case Node::Kind::scale:
        for (int p = 0; p < parts; ++p) grad[n.a][p] += n.s * g[p];
        if (n.pointwise) {  // (D - cl) g: a fresh component, entering the input with coefficient 1
          require_capacity<kParts>(parts);
          maps[parts] = n.v * gram_map(g, maps);
          grad[n.a][parts++] += 1.0;
        }
        break;
      case Node::Kind::branch: {
        require_capacity<kParts>(parts);
        SublayerRecord& r = ctx.rec(t.k + n.slot);
        r.anchor_f = anchor, r.to_branch = gram_map(g, maps);
        maps[parts] = t.evals[n.slot].back * r.to_branch;
        grad[n.a][parts++] += 1.0;
        value_residual_edges<kParts>(ctx, t, n, r, anchor, grad, maps, parts, side);
        break;
      }
    }
  }
  ctx.rec(t.k).back = gram_map(grad[0], maps);
  if (side >= 0) record_side<kParts>(ctx, t, outs, span, grad, side);
  for (int j = 0; j < span; ++j) ctx.rec(t.k + j).anchor = anchor;
}

}  // namespace

vocab::ScalarEnv scalar_env(const StackContext& ctx, int k) {
  vocab::ScalarEnv env;
  const StackSpec& s = ctx.spec;
  env.k = k, env.K = s.depth, env.b = block_of(s, k), env.L = block_count(s);
  env.attention = !ctx.branch(k).is_mlp();
  env.m_N = s.m_N, env.m_L = s.m_L;
  env.param = [&s](const std::string& name) { return parameter(s, name); };
  return env;
}

double branch_scale_at(const StackContext& ctx, int k) {
  const double s = vocab::eval_scalar(ctx.branch_scale, ctx.branch_scale.root, scalar_env(ctx, k));
  const auto& mult = ctx.spec.branch_multiplier;  // a parametrization's, as sim/stack_build.cpp applies it
  return mult.empty() ? s : s * mult[std::size_t(k)];
}

namespace {

template <int kParts>
int step_unit(StackContext& ctx, int k) {
  using Node = detail::Node<kParts>;
  const int span = vocab::unit_size(ctx.block, ctx.spec.sublayer);
  Tape<kParts> t{ctx, k};
  t.part[0] = ctx.x(k);
  const bool tracks_change = !ctx.change.empty();
  if (tracks_change) t.dpart[0] = ctx.change[k];
  Node in{Node::Kind::input};
  in.lin[0] = 1.0, in.gram = ctx.x(k);
  if (!ctx.raw.empty()) t.raw[0] = ctx.raw[k];
  if (const double mu = ctx.mean.empty() ? 0.0 : ctx.mean[k]; mu != 0.0) {
    // x_k = mu 1 + (a zero-mean part): the ones part carries the mean (pointwise norms)
    t.part[0] = ctx.x(k) + (-mu * mu) * TokenGram{1.0, 1.0};
    t.ones = t.new_part({1.0, 1.0}, {});
    in.lin[t.ones] = mu;
  }
  const int input = t.push(in);
  std::array<int, kUnit> outs{-1, -1, -1};
  int x = input;
  for (int j = 0; j < span; ++j) {
    t.sub = j;
    const vocab::Expr& e = ctx.block.sublayers[vocab::expression_at(ctx.block, span, j)];
    // emb: a block that reads it is refused by validate(StackSpec) (its Gram with x is not carried), so -1.
    outs[j] = vocab::eval_stream(e, e.root, t, scalar_env(ctx, k + j), x, input, -1);
    ctx.x(k + j + 1) = t.nodes[outs[j]].gram;
    if (!ctx.mean.empty()) {
      ctx.mean[k + j + 1] = t.mean(outs[j]);
      bool raw = false;
      for (int p = 0; p < t.parts; ++p) raw = raw || (t.raw[p] && t.nodes[outs[j]].lin[p] != 0.0);
      ctx.raw[k + j + 1] = raw;
    }
    if (tracks_change) ctx.change[k + j + 1] = t.change(outs[j]);
    SublayerRecord& r = ctx.rec(k + j);
    r.set_branch(t.inputs[j], t.evals[j]);
    r.cross = t.cross(x, outs[j]).diag;
    x = outs[j];
  }
  backward(ctx, t, outs, span);
  return span;
}

}  // namespace

int step_expression(StackContext& ctx, int k) {
  return vocab::is_pointwise(ctx.spec.norm) ? step_unit<kPointwiseParts>(ctx, k)
                                            : step_unit<kNormParts>(ctx, k);
}

}  // namespace normsim::theory::detail
