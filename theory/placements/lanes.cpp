// The mean field of a block of n > 1 lanes, or of one that reads emb (docs/design/multistream.md 3.4). The
// unit's input values (the lanes, then emb) enter the tape of theory/placements/unit_tape.hpp as combinations
// of the parts lane_parts() finds for their joint Gram; the rest is the one-stream algebra: every value a
// combination of uncorrelated parts, cross(i, j) the joint moment. The output values' joint Gram is carried
// to the next unit; emb passes every unit unchanged. The per-layer metrics read the lanes' mean (the
// simulator's stream[l], sim/stack_build.cpp) and the sum of the lanes' gradients (sim/cpu/cpu_backend.cpp
// lanes_gradient).
#include <span>
#include <stdexcept>
#include <vector>

#include "theory/placements/context.hpp"
#include "theory/placements/unit_tape.hpp"
#include "vocab/block_eval.hpp"

namespace normsim::theory::detail {
namespace {

// Input lanes, parts and branches: 16 holds a few lanes with emb and a unit's three branches.
constexpr int kLaneParts = 16;
using LaneTape = Tape<kLaneParts>;

// Layer l's values' joint Gram from the tape's nodes (lanes, then emb): diagonal entries are the nodes' own
// Grams (a norm's computed by normalized(), as for one stream), the others their cross moments.
LaneGram joint_gram(const LaneTape& t, const std::vector<int>& values) {
  const int m = int(values.size());
  LaneGram g(m, {});
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < m; ++j)
      g(i, j) = i == j ? t.nodes[std::size_t(values[std::size_t(i)])].gram
                       : t.cross(values[std::size_t(i)], values[std::size_t(j)]);
  return g;
}

// The per-token moment (lanes' mean of `a`) . (lanes' mean of `b`) / d over the first n values of each.
double mean_cross(const LaneTape& t, const std::vector<int>& a, const std::vector<int>& b, int n) {
  double c = 0.0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) c += t.cross(a[std::size_t(i)], b[std::size_t(j)]).diag;
  return c / (double(n) * double(n));
}

// The backward record of the unit (LaneRecord): the reverse walk of expression.cpp's backward(), seeded with
// one coefficient per output value and collecting coefficient rows instead of Gram maps.
LaneRecord record(const LaneTape& t, const std::vector<int>& inputs,
                  const std::vector<std::vector<int>>& outs, int n) {
  using Node = LaneTape::Node;
  const int m = int(inputs.size()), width = m + kUnit;
  std::vector<std::vector<double>> grad(t.nodes.size(), std::vector<double>(std::size_t(width), 0.0));
  for (int i = 0; i < m; ++i) grad[std::size_t(outs.back()[std::size_t(i)])][std::size_t(i)] += 1.0;
  LaneRecord r;
  r.m = m;
  for (int i = int(t.nodes.size()) - 1; i >= 0; --i) {
    const Node& node = t.nodes[std::size_t(i)];
    const std::vector<double> g = grad[std::size_t(i)];
    std::vector<double>& to = grad[std::size_t(node.a < 0 ? i : node.a)];
    switch (node.kind) {
      case Node::Kind::input:
        break;
      case Node::Kind::add:
        for (int p = 0; p < width; ++p) to[std::size_t(p)] += g[std::size_t(p)];
        for (int p = 0; p < width; ++p) grad[std::size_t(node.b)][std::size_t(p)] += g[std::size_t(p)];
        break;
      case Node::Kind::norm:
      case Node::Kind::scale:
        for (int p = 0; p < width; ++p) to[std::size_t(p)] += node.s * g[std::size_t(p)];
        break;
      case Node::Kind::branch:
        to[std::size_t(m) + r.fresh.size()] += 1.0;
        r.fresh.push_back({node.slot, t.evals[std::size_t(node.slot)].back, g});
        break;
    }
  }
  for (const int v : inputs) r.input.push_back(grad[std::size_t(v)]);
  // An inner layer's lanes may share a node (two equal lanes are one Value in the simulator, whose gradient
  // the metric counts once): each distinct node once.
  for (std::size_t j = 0; j + 1 < outs.size(); ++j) {
    std::vector<double> sum(std::size_t(width), 0.0);
    for (int i = 0; i < n; ++i) {
      const int v = outs[j][std::size_t(i)];
      bool seen = false;
      for (int h = 0; h < i; ++h) seen = seen || outs[j][std::size_t(h)] == v;
      if (!seen)
        for (int p = 0; p < width; ++p) sum[std::size_t(p)] += grad[std::size_t(v)][std::size_t(p)];
    }
    r.inner.push_back(sum);
  }
  return r;
}

// The input values of the unit at k, as tape nodes over the parts of their joint Gram.
std::vector<int> input_values(LaneTape& t, const LaneGram& in) {
  const LaneParts parts = lane_parts(in);
  require_capacity<kLaneParts>(parts.r - 1);
  for (int p = 0; p < parts.r; ++p) t.part[std::size_t(p)] = {1.0, parts.off[std::size_t(p)]};
  t.parts = parts.r;
  std::vector<int> values;
  for (int i = 0; i < in.m; ++i) {
    LaneTape::Node node{LaneTape::Node::Kind::input};
    for (int p = 0; p < parts.r; ++p) node.lin[std::size_t(p)] = parts.coef[std::size_t(i * parts.r + p)];
    node.gram = in(i, i);
    values.push_back(t.push(node));
  }
  return values;
}

}  // namespace

int step_lanes(StackContext& ctx, int k) {
  LaneState& ls = ctx.lanes;
  const int span = vocab::unit_size(ctx.block, ctx.spec.sublayer), n = ls.n;
  LaneTape t{ctx, k};
  const std::vector<int> inputs = input_values(t, ls.x[std::size_t(k)]);
  const int emb = ls.emb ? inputs[std::size_t(n)] : -1;
  std::vector<int> lanes(inputs.begin(), inputs.begin() + n);
  std::vector<std::vector<int>> outs;
  for (int j = 0; j < span; ++j) {
    t.sub = j;
    const vocab::Expr& e = ctx.block.sublayers[vocab::expression_at(ctx.block, span, j)];
    const vocab::ScalarEnv env = scalar_env(ctx, k + j);
    // x0, the pair's input, is the unit's (the parser refuses it in a block of n > 1 lanes).
    std::vector<int> out =
        n == 1 ? std::vector<int>{vocab::eval_stream(e, e.root, t, env, lanes[0], inputs[0], emb)}
               : vocab::eval_lanes(e, t, env, std::span<const int>(lanes), lanes[0], emb);
    if (ls.emb) out.push_back(emb);
    ls.x[std::size_t(k + j + 1)] = joint_gram(t, out);
    ctx.x(k + j + 1) = (1.0 / (double(n) * double(n))) * ls.x[std::size_t(k + j + 1)].sum(n);
    SublayerRecord& r = ctx.rec(k + j);
    r.set_branch(t.inputs[std::size_t(j)], t.evals[std::size_t(j)]);
    r.cross = mean_cross(t, lanes, out, n);
    lanes.assign(out.begin(), out.begin() + n);
    outs.push_back(std::move(out));
  }
  ls.rec[std::size_t(k)] = record(t, inputs, outs, n);
  return span;
}

void start_lanes(StackContext& ctx) {
  const int n = ctx.block.lanes();
  const bool emb = vocab::reads_embedding(ctx.block);
  if (n == 1 && !emb) return;
  const int depth = ctx.spec.depth;
  ctx.lanes.n = n, ctx.lanes.emb = emb;
  ctx.lanes.x.assign(std::size_t(depth) + 1, LaneGram{});
  ctx.lanes.x[0] = LaneGram(n + (emb ? 1 : 0), ctx.x(0));  // x_0's lanes and emb: copies of x_0
  ctx.lanes.rec.assign(std::size_t(depth), LaneRecord{});
  ctx.lanes.branch_grad.assign(std::size_t(depth), TokenGram{});
}

void backward_lanes(StackContext& ctx) {
  LaneState& ls = ctx.lanes;
  const int depth = ctx.spec.depth, n = ls.n, m = ls.m();
  const int unit = vocab::unit_size(ctx.block, ctx.spec.sublayer);
  // The readout reads the lanes' sum, so every lane's gradient is the sum's, g(K) (emb's is zero).
  LaneGram g(m, {});
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) g(i, j) = ctx.g(depth);
  ctx.g(depth) = g.sum(n);
  std::vector<TokenGram> inner(static_cast<std::size_t>(unit));
  for (int k = depth - unit; k >= 0; k -= unit) {
    g = back(ls.rec[std::size_t(k)], g,
             std::span<TokenGram>(ls.branch_grad).subspan(std::size_t(k), std::size_t(unit)),
             std::span<TokenGram>(inner).first(std::size_t(unit) - 1));
    for (int j = 1; j < unit; ++j) ctx.g(k + j) = inner[std::size_t(j) - 1];
    // x_0's lanes and emb are one value in the simulator: its gradient sums all m.
    ctx.g(k) = g.sum(k == 0 ? m : n);
  }
}

}  // namespace normsim::theory::detail
