// The block language: what one residual sublayer computes, as an expression (docs/placements.md).
//   x          the stream entering the sublayer, x_k
//   x0         the pair's input x_{2j} (paired blocks; in the pair's first expression it is x itself)
//   emb        the stack's input x_0, after the input norm (the embedding skip of modded-nanogpt and
//   nanochat) N(.)       the configured norm          F(.)  this sublayer's branch (its output times
//   branch_scale) Fqkv(.)    the branch with per-head RMSNorm of Q, K and V (attention; an MLP branch ignores
//   it)
//   + - * /    on streams and numbers (a stream times or over a number; streams add)
//   numbers, k (sublayer index), K (depth), b (block index), L (blocks), attention (1 at an attention
//   sublayer, else 0), m_N = width/base_width, m_L = depth/base_depth, sqrt(.), floor(.), a ^ b (power of
//   numbers: right-associative, above unary minus, -2^2 = -4), a < b (1 or 0), c ? s : t (c a number), and
//   the names of numeric config keys (rezero_alpha, ...); a parametrization rule (sim/parametrization.hpp)
//   also reads fan_in and fan_out of the matrix it is evaluated for.
// A block is one expression, or two separated by ';' for a placement that spans a pair of sublayers
// (sublayer 2j runs the first, 2j+1 the second; a decoder layer: unit_size below). Every expression is a
// stream and calls F exactly once on every path. Parsing is the only place the text is read; the evaluators
// walk the parsed nodes.
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
    norm,        // N(a)
    branch,      // F(a)
    branch_qkv,  // Fqkv(a)
    sqrt,
    floor,
    neg,
    add,
    sub,
    mul,
    div,
    less,
    cond,  // a ? b : c
    pow    // a ^ b
  };
  Op op = Op::number;
  double value = 0;
  ScalarVar var = ScalarVar::k;
  std::string name;
  int a = -1, b = -1, c = -1;  // children (indices into Expr::nodes; equal subexpressions share one node)
  bool is_stream = false;      // a T x d value (else a number)
  int column = 1;              // 1-based, in the whole block text
};

struct Expr {
  std::vector<ExprNode> nodes;
  int root = -1;
  const ExprNode& node(int i) const { return nodes.at(static_cast<std::size_t>(i)); }
};

struct Block {
  std::string text;
  std::vector<Expr> sublayers;  // 1, or 2 for a pair
  int span() const { return static_cast<int>(sublayers.size()); }
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

// The sublayers one unit of a block covers on a stack of sublayer kind `kind` (vocab::unit_sublayers), and
// which expression runs at position `pos` of the unit.
inline int unit_size(const Block& b, Sublayer kind) {
  return unit_sublayers(b.span(), kind);
}
inline int expression_at(const Block& b, int unit, int pos) {
  return b.span() == 1 || pos < unit - 1 ? 0 : 1;
}

// Whether the value of node i reads x (ExprNode::Op::stream) whichever arm each condition takes: a
// condition's arms must both read it, any other node through one of its operands.
inline bool always_reads_stream(const Expr& e, int i) {
  if (i < 0) return false;
  const ExprNode& n = e.node(i);
  if (n.op == ExprNode::Op::stream) return true;
  if (n.op == ExprNode::Op::cond) return always_reads_stream(e, n.b) && always_reads_stream(e, n.c);
  return always_reads_stream(e, n.a) || always_reads_stream(e, n.b) || always_reads_stream(e, n.c);
}

// A block or scalar expression as a user writes it is at most this long: every interpreter walks the tree
// recursively and a flat sum of n terms is a tree n deep (a crash past ~8,000 terms; parsing was quadratic).
// Checked at the config's edge (sim/config_schema.cpp), not on the texts normsim renders and reads back.
inline constexpr std::size_t kMaxExpressionLength = 4096;
// Throws ExprError (column 4097) when `text` is longer.
void check_expression_length(std::string_view text);

// The expression written back in the language (`normsim list placements`, messages).
std::string to_text(const Expr& e);
std::string to_text(const Block& b);

}  // namespace normsim::vocab
