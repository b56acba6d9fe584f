// Numbers of the block language, and the expression written back as text (vocab/block_eval.hpp,
// vocab/block_expr.hpp).
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <vector>

#include "vocab/block_eval.hpp"

namespace normsim::vocab {
namespace {

using Op = ExprNode::Op;

double var_value(ScalarVar v, const ScalarEnv& env) {
  switch (v) {
    case ScalarVar::k:
      return env.k;
    case ScalarVar::K:
      return env.K;
    case ScalarVar::b:
      return env.b;
    case ScalarVar::L:
      return env.L;
    case ScalarVar::attention:
      return env.attention ? 1.0 : 0.0;
    case ScalarVar::m_N:
      return env.m_N;
    case ScalarVar::m_L:
      return env.m_L;
    case ScalarVar::fan_in:
      return env.fan_in;
    case ScalarVar::fan_out:
      return env.fan_out;
  }
  return 0.0;
}

std::string_view var_name(ScalarVar v) {
  constexpr std::array<std::string_view, 9> names{"k",   "K",   "b",      "L",      "attention",
                                                  "m_N", "m_L", "fan_in", "fan_out"};
  return names[static_cast<std::size_t>(v)];
}

// Binding strength, for writing the fewest parentheses that keep the tree.
int precedence(Op op) {
  switch (op) {
    case Op::cond:
      return 0;
    case Op::less:
      return 1;
    case Op::add:
    case Op::sub:
      return 2;
    case Op::mul:
    case Op::div:
      return 3;
    case Op::neg:
      return 4;
    case Op::pow:
      return 5;
    default:
      return 6;
  }
}

// n of an n x n matrix node (Op::sinkhorn).
std::size_t matrix_order(const ExprNode& n) {
  return std::size_t(std::lround(std::sqrt(double(n.args.size()))));
}

// sinkhorn(M, iters), entry n.lane, as mHC's code computes it (lucidrains/hyper-connections
// manifold_constrained_hyper_connections.py @4775103 l.49-61, sinkhorn_knopps): each column less its
// maximum, exp, then iters times every column and then every row divided by its L1 norm (F.normalize p = 1:
// by max(norm, 1e-12)). Every entry is computed whole: n is at most 16.
double sinkhorn_entry(const Expr& e, const ExprNode& n, const ScalarEnv& env) {
  const std::size_t m = matrix_order(n);
  std::vector<double> a(n.args.size());
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = eval_scalar(e, n.args[i], env);
  for (std::size_t c = 0; c < m; ++c) {
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t r = 0; r < m; ++r) top = std::max(top, a[r * m + c]);
    for (std::size_t r = 0; r < m; ++r) a[r * m + c] = std::exp(a[r * m + c] - top);
  }
  const auto normalize = [&](std::size_t first, std::size_t stride) {
    double sum = 0;
    for (std::size_t k = 0; k < m; ++k) sum += std::abs(a[first + k * stride]);
    for (std::size_t k = 0; k < m; ++k) a[first + k * stride] /= std::max(sum, 1e-12);
  };
  for (int it = 0; it < int(n.value); ++it) {
    for (std::size_t c = 0; c < m; ++c) normalize(c, m);      // dim -2: a column
    for (std::size_t r = 0; r < m; ++r) normalize(r * m, 1);  // dim -1: a row
  }
  return a[std::size_t(n.lane)];
}

std::string number_text(double v) {
  std::array<char, 32> buf{};
  const auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), v);
  return std::string(buf.data(), end);
}

void write(const Expr& e, int i, int min_prec, std::string& out);

// sinkhorn(M, iters)[i][j], M written from the node's entries.
void write_sinkhorn(const Expr& e, const ExprNode& n, std::string& out) {
  const std::size_t m = matrix_order(n);
  out += "sinkhorn([";
  for (std::size_t r = 0; r < m; ++r) {
    out += r ? ", [" : "[";
    for (std::size_t c = 0; c < m; ++c) {
      if (c) out += ", ";
      write(e, n.args[r * m + c], 0, out);
    }
    out += ']';
  }
  out += "], " + number_text(n.value) + ")[" + std::to_string(std::size_t(n.lane) / m) + "][" +
         std::to_string(std::size_t(n.lane) % m) + "]";
}

// Appends node i to out, in parentheses when it binds less tightly than min_prec.
void write(const Expr& e, int i, int min_prec, std::string& out) {
  const ExprNode& n = e.node(i);
  const int p = precedence(n.op);
  if (p < min_prec) out += '(';
  switch (n.op) {
    case Op::number:
      out += number_text(n.value);
      break;
    case Op::scalar_var:
      out += var_name(n.var);
      break;
    case Op::param:
      out += n.name;
      break;
    case Op::stream:
      out += 'x';
      break;
    case Op::pair_input:
      out += "x0";
      break;
    case Op::embedding:
      out += "emb";
      break;
    case Op::lane:
      out += "x[" + std::to_string(n.lane) + "]";
      break;
    case Op::sinkhorn:
      write_sinkhorn(e, n, out);
      break;
    case Op::branch_value:
      out += "Fv(";
      write(e, n.a, 0, out);
      out += ", ";
      write(e, n.b, 0, out);
      out += ')';
      break;
    case Op::norm:
    case Op::branch:
    case Op::branch_qkv:
    case Op::sqrt:
    case Op::floor:
    case Op::sigmoid: {
      constexpr std::array<std::string_view, 6> f{"N", "F", "Fqkv", "sqrt", "floor", "sigmoid"};
      out += f[static_cast<std::size_t>(n.op) - static_cast<std::size_t>(Op::norm)];
      out += '(';
      write(e, n.a, 0, out);
      out += ')';
      break;
    }
    case Op::neg:
      out += '-';
      write(e, n.a, p, out);
      break;
    case Op::pow:  // a primary raised to a unary (block_parse.cpp's grammar): 2^-1 stays as written
      write(e, n.a, p + 1, out);
      out += '^';
      write(e, n.b, precedence(Op::neg), out);
      break;
    case Op::cond:
      write(e, n.a, 1, out);
      out += " ? ";
      write(e, n.b, 0, out);
      out += " : ";
      write(e, n.c, 0, out);
      break;
    default: {
      constexpr std::array<std::string_view, 5> sym{" + ", " - ", " * ", " / ", " < "};
      write(e, n.a, p, out);
      out += sym[static_cast<std::size_t>(n.op) - static_cast<std::size_t>(Op::add)];
      write(e, n.b, p + 1, out);
    }
  }
  if (p < min_prec) out += ')';
}

}  // namespace

double eval_scalar(const Expr& e, int i, const ScalarEnv& env) {
  const ExprNode& n = e.node(i);
  auto num = [&](int j) { return eval_scalar(e, j, env); };
  switch (n.op) {
    case Op::number:
      return n.value;
    case Op::scalar_var:
      return var_value(n.var, env);
    case Op::param:
      return env.param(n.name);
    case Op::sqrt:
      return std::sqrt(num(n.a));
    case Op::floor:
      return std::floor(num(n.a));
    case Op::sigmoid:
      return 1.0 / (1.0 + std::exp(-num(n.a)));
    case Op::sinkhorn:
      return sinkhorn_entry(e, n, env);
    case Op::neg:
      return -num(n.a);
    case Op::add:
      return num(n.a) + num(n.b);
    case Op::sub:
      return num(n.a) - num(n.b);
    case Op::mul:
      return num(n.a) * num(n.b);
    case Op::div:
      return num(n.a) / num(n.b);
    case Op::less:
      return num(n.a) < num(n.b) ? 1.0 : 0.0;
    case Op::pow:
      return std::pow(num(n.a), num(n.b));
    case Op::cond:
      return num(n.a) != 0.0 ? num(n.b) : num(n.c);
    default:
      throw ExprError(n.column, "a stream where a number is needed");
  }
}

bool ends_in_norm(const Expr& e, const ScalarEnv& env) {
  int i = e.root;
  while (e.node(i).op == Op::cond) i = eval_scalar(e, e.node(i).a, env) != 0.0 ? e.node(i).b : e.node(i).c;
  return e.node(i).op == Op::norm;
}

std::string to_text(const Expr& e) {
  std::string out;
  if (e.lanes() <= 1) {  // a number, or a stream: as before lanes, byte for byte
    write(e, e.root, 0, out);
    return out;
  }
  for (const int root : e.roots) {  // lanes as their literal [s, t, ...], which parses back to them
    out += out.empty() ? "[" : ", ";
    write(e, root, 0, out);
  }
  return out + "]";
}

std::string to_text(const Block& b) {
  std::string out;
  for (const Expr& e : b.sublayers) out += (out.empty() ? "" : "; ") + to_text(e);
  return out;
}

}  // namespace normsim::vocab
