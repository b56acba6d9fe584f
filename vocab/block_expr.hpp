// The block language: what one residual sublayer computes, as an expression (docs/placements.md).
//   x          the stream entering the sublayer, x_k; in a block of n > 1 lanes, the n lanes x_k^0..x_k^{n-1}
//   x[i]       lane i (docs/design/multistream.md 3.2; hyper-connections' expanded residual streams)
//   [a, b]     a vector of numbers, [[a, b], [c, d]] a matrix (row i makes lane i), [s, t] lanes of streams
//   v @ x      the stream sum_j v_j x[j];  M @ x  the lanes sum_j M[i][j] x[j];  v * s  the lanes v_i s
//   x0         the pair's input x_{2j} (paired blocks; in the pair's first expression it is x itself)
//   emb        the stack's input x_0, after the input norm (the embedding skip of modded-nanogpt and
//   nanochat) N(.)       the configured norm          F(.)  this sublayer's branch (its output times
//   branch_scale) Fqkv(.)    the branch with per-head RMSNorm of Q, K and V (attention; an MLP branch ignores
//   it)
//   Fv(., lam)  the branch with ResFormer's value residual (arXiv 2410.17897): attention whose values are
//   (1 - lam) V + lam V_1, V_1 the values of the first attention sublayer that calls Fv (which runs as F:
//   its V is V_1); lam a number expression; an MLP branch ignores it (docs/theory_notes.md "Value residual")
//   + - * /    on streams and numbers (a stream times or over a number; streams add)
//   numbers, k (sublayer index), K (depth), b (block index), L (blocks), attention (1 at an attention
//   sublayer, else 0), m_N = width/base_width, m_L = depth/base_depth, sqrt(.), floor(.), sigmoid(.),
//   sinkhorn(M, iters) (a matrix; [i][j] an entry), a ^ b (power of numbers: right-associative, above unary
//   minus, -2^2 = -4), a < b (1 or 0), c ? s : t (c a number), and the names of numeric config keys
//   (rezero_alpha, ...); a parametrization rule (sim/parametrization.hpp) also reads fan_in and fan_out of
//   the matrix it is evaluated for.
// A block is one expression, or two separated by ';' for a placement that spans a pair of sublayers
// (sublayer 2j runs the first, 2j+1 the second; a decoder layer: unit_size below). Every expression is a
// stream and calls F exactly once on every path. A block of n lanes (n: the largest lane index + 1 and the
// width of its literals, which must agree) is lanes-valued; the parser lowers it to n stream roots (a literal
// 0 coefficient is an absent term, a literal 1 no scale), which reach one F node between them (a lane may
// skip F). Parsing is the only place the text is read; the evaluators walk the parsed nodes.
#pragma once
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "vocab/enums.hpp"
#include "vocab/sublayer_layout.hpp"

namespace normsim::vocab {

enum class ScalarVar { k, K, b, L, attention, m_N, m_L, fan_in, fan_out };

// Where a number-valued expression is read: a sublayer's (branch_scale, norm_alpha, ...), or a matrix's (a
// parametrization rule, which may read fan_in and fan_out).
enum class ScalarScope { sublayer, matrix };

struct ExprNode {
  enum class Op {
    number,      // value
    scalar_var,  // var
    param,       // name: a config key
    stream,      // x
    pair_input,  // x0
    embedding,   // emb
    lane,        // x[lane]
    norm,        // N(a)
    branch,      // F(a)
    branch_qkv,  // Fqkv(a)
    sqrt,
    floor,
    sigmoid,
    sinkhorn,  // entry `lane` (row-major) of sinkhorn(args as an n x n matrix, `value` iterations)
    neg,
    add,
    sub,
    mul,
    div,
    less,
    cond,         // a ? b : c
    pow,          // a ^ b
    branch_value  // Fv(a, b): the branch with its values mixed with V_1's, b the weight of V_1
  };
  Op op = Op::number;
  double value = 0;
  ScalarVar var = ScalarVar::k;
  std::string name;
  int lane = 0;                // of Op::lane; of Op::sinkhorn, the entry (row * n + column)
  std::vector<int> args;       // of Op::sinkhorn: the matrix's entries, row-major
  int a = -1, b = -1, c = -1;  // children (indices into Expr::nodes; equal subexpressions share one node)
  bool is_stream = false;      // a T x d value (else a number)
  int column = 1;              // 1-based, in the whole block text
};

struct Expr {
  std::vector<ExprNode> nodes;
  int root = -1;           // the value: a number, a stream, or lane 0 of a block of lanes (roots.front())
  std::vector<int> roots;  // a stream expression's lanes, one root each (n = 1: {root})
  const ExprNode& node(int i) const { return nodes.at(static_cast<std::size_t>(i)); }
  int lanes() const { return static_cast<int>(roots.size()); }
};

struct Block {
  std::string text;
  std::vector<Expr> sublayers;  // 1, or 2 for a pair
  int span() const { return static_cast<int>(sublayers.size()); }
  int lanes() const { return sublayers.front().lanes(); }  // every expression of a block has the same n
};

// A parse error: the 1-based column in the text and why.
class ExprError : public std::invalid_argument {
 public:
  ExprError(int column, const std::string& why)
      : std::invalid_argument("column " + std::to_string(column) + ": " + why), column_(column) {}
  int column() const { return column_; }

 private:
  int column_;
};

Block parse_block(std::string_view text);  // throws ExprError
// A number-valued expression (branch_scale; a parametrization rule's field with scope matrix); throws
// ExprError.
Expr parse_scalar(std::string_view text, ScalarScope scope = ScalarScope::sublayer);
std::vector<std::string> params(const Expr& e);  // the config-key names the expression reads
bool reads_embedding(const Block& b);            // whether an expression of b reads emb
bool reads_first_values(const Block& b);         // whether an expression of b calls Fv (V_1)

// Whether op calls the sublayer's branch: F, Fqkv or Fv.
inline bool is_branch(ExprNode::Op op) {
  return op == ExprNode::Op::branch || op == ExprNode::Op::branch_qkv || op == ExprNode::Op::branch_value;
}

// The sublayers one unit of a block covers on a stack of sublayer kind `kind` (vocab::unit_sublayers), and
// which expression runs at position `pos` of the unit.
inline int unit_size(const Block& b, Sublayer kind) {
  return unit_sublayers(b.span(), kind);
}
inline int expression_at(const Block& b, int unit, int pos) {
  return b.span() == 1 || pos < unit - 1 ? 0 : 1;
}

// Whether the value of node i reads x (ExprNode::Op::stream, or a lane of it) whichever arm each condition
// takes: a condition's arms must both read it, any other node through one of its operands.
inline bool always_reads_stream(const Expr& e, int i) {
  if (i < 0) return false;
  const ExprNode& n = e.node(i);
  if (n.op == ExprNode::Op::stream || n.op == ExprNode::Op::lane) return true;
  if (n.op == ExprNode::Op::cond) return always_reads_stream(e, n.b) && always_reads_stream(e, n.c);
  return always_reads_stream(e, n.a) || always_reads_stream(e, n.b) || always_reads_stream(e, n.c);
}

// sinkhorn(M, iters) iterates at most this often (mHC uses 20: lucidrains/hyper-connections
// manifold_constrained_hyper_connections.py @4775103 l.49-61).
inline constexpr int kMaxSinkhornIterations = 1000;

// A block or scalar expression as a user writes it is at most this long: every interpreter walks the tree
// recursively and a flat sum of n terms is a tree n deep (a crash past ~8,000 terms; parsing was quadratic).
// Checked at the config's edge (sim/run/config_schema.cpp), not on the texts normsim renders and reads back.
inline constexpr std::size_t kMaxExpressionLength = 4096;
// Throws ExprError (column 4097) when `text` is longer.
void check_expression_length(std::string_view text);

// The expression written back in the language (`normsim list placements`, messages).
std::string to_text(const Expr& e);
std::string to_text(const Block& b);

}  // namespace normsim::vocab
