// The one walk of a parsed block (vocab/block_expr.hpp) that every interpreter shares: numbers are
// computed here; streams are built through the interpreter's own operations (the simulator's StackOps, the
// mean field's Gram algebra). Children run in the order they are written.
#pragma once
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vocab/block_expr.hpp"

namespace normsim::vocab {

// What the numbers of a sublayer's expression may read.
struct ScalarEnv {
  int k = 0, K = 1, b = 0, L = 1;                   // sublayer, depth, block, blocks
  bool attention = false;                           // whether sublayer k's branch is attention
  double m_N = 1, m_L = 1;                          // width / base_width, depth / base_depth
  double fan_in = 0, fan_out = 0;                   // of the matrix a parametrization rule is evaluated for
  std::function<double(const std::string&)> param;  // a numeric config key's value
};

double eval_scalar(const Expr& e, int node, const ScalarEnv& env);

namespace detail {
template <class Streams>
struct StreamWalk {
  using Value = typename Streams::Value;
  const Expr& e;
  Streams& s;
  const ScalarEnv& env;
  Value x, x0, emb;
  std::span<const Value> lanes;            // x[0..n-1] (a block of n > 1 lanes)
  std::vector<std::optional<Value>> done;  // a node shared by two parents is computed once

  Value operator()(int i) {
    auto& slot = done.at(static_cast<std::size_t>(i));
    if (!slot) slot = compute(i);
    return *slot;
  }
  Value compute(int i);
};
}  // namespace detail

// Streams provides: using Value; Value norm(Value); Value add(Value, Value); Value scale(Value, double);
// Value branch(Value u, bool qkv_norm); Value branch_value(Value u, double lam) (Fv). x is the stream, x0 the
// pair's input, emb the stack's input (a block of one lane; eval_lanes runs any block).
template <class Streams>
typename Streams::Value eval_stream(const Expr& e, int i, Streams& s, const ScalarEnv& env,
                                    typename Streams::Value x, typename Streams::Value x0,
                                    typename Streams::Value emb) {
  detail::StreamWalk<Streams> walk{e, s, env, x, x0, emb, {}, {}};
  walk.done.resize(e.nodes.size());
  return walk(i);
}

// Every root of a block of lanes (Expr::roots), in lane order, through one memo: a node the lanes share (the
// branch above all) is computed once. lanes: x_k's n lanes; with n = 1 the result is eval_stream's.
template <class Streams>
std::vector<typename Streams::Value> eval_lanes(const Expr& e, Streams& s, const ScalarEnv& env,
                                                std::span<const typename Streams::Value> lanes,
                                                typename Streams::Value x0, typename Streams::Value emb) {
  detail::StreamWalk<Streams> walk{e, s, env, lanes.front(), x0, emb, lanes, {}};
  walk.done.resize(e.nodes.size());
  std::vector<typename Streams::Value> out;
  for (const int root : e.roots) out.push_back(walk(root));
  return out;
}

template <class Streams>
typename Streams::Value detail::StreamWalk<Streams>::compute(int i) {
  using Op = ExprNode::Op;
  const ExprNode& n = e.node(i);
  auto sub = [&](int j) { return (*this)(j); };
  auto num = [&](int j) { return eval_scalar(e, j, env); };
  switch (n.op) {
    case Op::stream:
      return x;
    case Op::pair_input:
      return x0;
    case Op::embedding:
      return emb;
    case Op::lane:
      return lanes[static_cast<std::size_t>(n.lane)];
    case Op::norm:
      return s.norm(sub(n.a));
    case Op::branch:
    case Op::branch_qkv:
      return s.branch(sub(n.a), n.op == Op::branch_qkv);
    case Op::branch_value:
      return s.branch_value(sub(n.a), num(n.b));
    case Op::neg:
      return s.scale(sub(n.a), -1.0);
    case Op::add: {
      const auto a = sub(n.a);
      return s.add(a, sub(n.b));
    }
    case Op::sub: {
      const auto a = sub(n.a);
      return s.add(a, s.scale(sub(n.b), -1.0));
    }
    case Op::mul:
      if (e.node(n.a).is_stream) {
        const auto a = sub(n.a);
        return s.scale(a, num(n.b));
      }
      return s.scale(sub(n.b), num(n.a));
    case Op::div: {  // a stream over a number is scaled by the reciprocal
      const auto a = sub(n.a);
      return s.scale(a, 1.0 / num(n.b));
    }
    case Op::cond:
      return num(n.a) != 0.0 ? sub(n.b) : sub(n.c);
    default:
      throw ExprError(n.column, "a number where a stream is needed");
  }
}

// The sublayer's expression with every condition decided: whether its result is the output of N
// (the placement then ends in a norm and no final norm is added by default).
bool ends_in_norm(const Expr& e, const ScalarEnv& env);

}  // namespace normsim::vocab
