// The block language's parser (vocab/block_expr.hpp): recursive descent over the text with the types
// (stream or number) checked as each node is made, so an error points at the column that caused it.
//   cond    := compare ['?' cond ':' cond]
//   compare := sum ['<' sum]
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/' | '@') unary)*
//   unary   := '-' unary | power
//   power   := primary ['^' unary]          (right-associative: 2^3^2 = 2^9; -2^2 = -(2^2); 2^-1 = 0.5)
//   primary := number | name | 'x' '[' integer ']' | name '(' cond ')' | '(' cond ')' | '[' cond (',' cond)*
//   ']'
// Lanes (a block of n > 1, docs/design/multistream.md 3.2) are lowered as they are parsed: a lanes value is n
// stream nodes, a literal 0 coefficient an absent term (not 0 * x, which would turn an Inf into a NaN).
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "vocab/block_expr.hpp"
#include "vocab/block_lanes.hpp"

namespace normsim::vocab {
namespace {

using Op = ExprNode::Op;

// Every interpreter walks an expression recursively (the parser, the simulator's evaluator, the mean field):
// nesting past this bound would overflow the stack (a crash at ~16,500 nested parentheses, ~5,600 nested
// N( or -), so it is refused here with its column. (The length bound is the config edge's:
// check_expression_length.)
constexpr int kMaxNesting = 64;  // parentheses, calls, unary minus and '?', one inside another

int characters(std::string_view text) {
  int n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// A parsed value. A number or a stream is one node; lanes are one stream node per lane (-1: a lane with no
// term yet, identically zero); a vector or matrix literal (row-major, n x n) holds number nodes.
struct Val {
  enum class Kind { number, stream, lanes, vector, matrix };
  Kind kind = Kind::number;
  int node = -1;
  std::vector<int> items;
  bool single() const { return kind == Kind::number || kind == Kind::stream; }
};

std::string kind_name(Val::Kind k) {
  constexpr std::array<const char*, 5> names{"a number", "a stream", "lanes", "a vector", "a matrix"};
  return names[static_cast<std::size_t>(k)];
}

class Parser {
 public:
  // offset: the characters (code points) before this expression in the block text; lanes: the block's n.
  Parser(std::string_view text, int offset, bool paired, int lanes, ScalarScope scope = ScalarScope::sublayer)
      : text_(text), offset_(offset), paired_(paired), lanes_(lanes), scope_(scope) {
    chars_before_.reserve(text.size() + 1);
    int n = 0;
    for (const char c : text) {
      chars_before_.push_back(n);
      n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // a UTF-8 continuation byte is no new character
    }
    chars_before_.push_back(n);
  }

  // The expression, its value's kind checked by the caller (a sublayer or a number).
  std::pair<Expr, Val> parse_whole() {
    const Val v = cond();
    skip_space();
    if (pos_ < text_.size()) fail(column(), "unexpected '" + character_here() + "'");
    expr_.root = v.single() ? v.node : -1;
    return {std::move(expr_), v};
  }

 private:
  std::string_view text_;
  int offset_;                     // characters before this expression in the block text
  std::vector<int> chars_before_;  // chars_before_[i]: the characters in text_[0, i)
  bool paired_;
  int lanes_;  // n: the block's lanes (lanes_in)
  ScalarScope scope_;
  std::size_t pos_ = 0;
  int depth_ = 0;  // parentheses, calls, unary minus and '?' now open
  Expr expr_;

  // Counts one level of nesting (a '(', a call, a unary '-', a '?') for its scope.
  struct Nest {
    Parser& p;
    Nest(Parser& parser, int column) : p(parser) {  // column: the '(', '-' or '?' that opens the level
      if (++p.depth_ > kMaxNesting)
        fail(column, "nested deeper than " + std::to_string(kMaxNesting) + " levels");
    }
    ~Nest() { --p.depth_; }
  };

  [[noreturn]] static void fail(int column, const std::string& why) { throw ExprError(column, why); }
  // 1-based, in characters: a non-ASCII character is one column, not the bytes of its UTF-8 sequence.
  int column() const { return offset_ + chars_before_[pos_] + 1; }
  // The character at pos_, whole (all the bytes of its UTF-8 sequence), for a message.
  std::string character_here() const {
    std::size_t end = pos_ + 1;
    while (end < text_.size() && (static_cast<unsigned char>(text_[end]) & 0xC0) == 0x80) ++end;
    return std::string(text_.substr(pos_, end - pos_));
  }
  const ExprNode& at(int i) const { return expr_.node(i); }

  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  void expect(char c) {
    if (!accept(c))
      fail(column(), pos_ < text_.size() ? "expected '" + std::string(1, c) + "'"
                                         : "expected '" + std::string(1, c) + "' at the end");
  }

  static ExprNode make(Op op, int col, int a = -1, bool stream = false) {
    ExprNode n;
    n.op = op, n.column = col, n.a = a, n.is_stream = stream;
    return n;
  }
  // A node equal to an earlier one (same operation on the same operands) is that node: N(x) written twice
  // is one value, as in `N(x) + F(N(x))`, and every interpreter computes it once.
  int add(ExprNode n) {
    for (std::size_t i = 0; i < expr_.nodes.size(); ++i) {
      const ExprNode& m = expr_.nodes[i];
      if (m.op == n.op && m.value == n.value && m.var == n.var && m.name == n.name && m.lane == n.lane &&
          m.args == n.args && m.a == n.a && m.b == n.b && m.c == n.c)
        return static_cast<int>(i);
    }
    expr_.nodes.push_back(std::move(n));
    return static_cast<int>(expr_.nodes.size()) - 1;
  }
  Val one(int node) const { return {at(node).is_stream ? Val::Kind::stream : Val::Kind::number, node, {}}; }
  // A number or a stream where one is needed, else an error naming what came.
  int single(const Val& v, int col, const std::string& where) const {
    if (v.single()) return v.node;
    if (v.kind == Val::Kind::lanes)
      fail(col, where + " takes one stream, not the block's " + std::to_string(lanes_) +
                    " lanes: pick one with x[i] or mix them with v @ x");
    fail(col, where + " takes a stream or a number, not " + kind_name(v.kind));
  }
  // v as lanes: lanes, or (n = 1) a stream.
  std::vector<int> as_lanes(const Val& v, int col) const {
    if (v.kind == Val::Kind::lanes) return v.items;
    if (v.kind == Val::Kind::stream && lanes_ == 1) return {v.node};
    if (v.kind == Val::Kind::stream)
      fail(col, "a stream where the block's " + std::to_string(lanes_) +
                    " lanes are needed: spread it with v * s, or write [s, t, ...]");
    fail(col, kind_name(v.kind) + " where lanes are needed");
  }
  // Lanes as a value: with n = 1, the one lane is the stream (every n = 1 text keeps its nodes).
  Val lanes_value(std::vector<int> items) const {
    if (lanes_ == 1 && items.front() >= 0) return one(items.front());
    return {Val::Kind::lanes, -1, std::move(items)};
  }

  int binary_nodes(Op op, int a, int b, int col) {
    const bool sa = at(a).is_stream, sb = at(b).is_stream;
    ExprNode n = make(op, col, a);
    n.b = b;
    switch (op) {
      case Op::add:
      case Op::sub:
        if (sa != sb) fail(col, "cannot add or subtract a stream and a number");
        n.is_stream = sa;
        break;
      case Op::mul:
        if (sa && sb) fail(col, "cannot multiply two streams (scale a stream by a number)");
        n.is_stream = sa || sb;
        break;
      case Op::div:
        if (sb) fail(col, "cannot divide by a stream");
        n.is_stream = sa;
        break;
      case Op::pow:
        if (sa || sb) fail(col, "'^' raises numbers, not streams");
        break;
      default:  // less
        if (sa || sb) fail(col, "'<' compares numbers, not streams");
    }
    return add(std::move(n));
  }
  // coefficient * stream, lowered: a literal 0 is no term (-1), a literal 1 the stream itself.
  int term(int coefficient, int stream, int col) {
    const ExprNode& c = at(coefficient);
    if (stream < 0 || (c.op == Op::number && c.value == 0.0)) return -1;
    if (c.op == Op::number && c.value == 1.0) return stream;
    return binary_nodes(Op::mul, coefficient, stream, col);
  }
  // a + b or a - b of two terms, either possibly absent (-1).
  int combined(Op op, int a, int b, int col) {
    if (b < 0) return a;
    if (a < 0) return op == Op::add ? b : add(make(Op::neg, col, b, true));
    return binary_nodes(op, a, b, col);
  }
  // sum_j row[j] * lanes[j].
  int mixed(std::span<const int> row, const std::vector<int>& lanes, int col) {
    int sum = -1;
    for (std::size_t j = 0; j < lanes.size(); ++j)
      sum = combined(Op::add, sum, term(row[j], lanes[j], col), col);
    return sum;
  }

  Val binary(Op op, const Val& a, const Val& b, int col) {
    if (a.single() && b.single()) return one(binary_nodes(op, a.node, b.node, col));
    using K = Val::Kind;
    std::vector<int> out;
    if (op == Op::add || op == Op::sub) {
      const std::vector<int> l = as_lanes(a, col), r = as_lanes(b, col);
      for (std::size_t i = 0; i < l.size(); ++i) out.push_back(combined(op, l[i], r[i], col));
    } else if (op == Op::mul && (a.kind == K::vector || b.kind == K::vector)) {
      const Val& v = a.kind == K::vector ? a : b;
      const int s = single(a.kind == K::vector ? b : a, col, "v * s");
      if (!at(s).is_stream) fail(col, "a vector times a number: write the entries' products");
      for (const int c : v.items) out.push_back(term(c, s, col));
    } else if ((op == Op::mul || op == Op::div) && b.kind == K::number) {
      for (const int l : as_lanes(a, col)) out.push_back(l < 0 ? -1 : binary_nodes(op, l, b.node, col));
    } else if (op == Op::mul && a.kind == K::number) {
      for (const int l : as_lanes(b, col)) out.push_back(l < 0 ? -1 : binary_nodes(op, a.node, l, col));
    } else {
      fail(col, "cannot combine " + kind_name(a.kind) + " and " + kind_name(b.kind) + " this way");
    }
    return lanes_value(std::move(out));
  }
  // v @ x: one stream; M @ x: lanes, row i making lane i.
  Val matmul(const Val& a, const Val& b, int col) {
    const std::vector<int> x = as_lanes(b, col);
    if (a.kind == Val::Kind::vector) {
      const int s = mixed(a.items, x, col);
      if (s < 0) fail(col, "v @ x has no term here (every coefficient is a literal 0)");
      return one(s);
    }
    if (a.kind != Val::Kind::matrix)
      fail(col, "'@' takes a vector or a matrix on its left, not " + kind_name(a.kind));
    std::vector<int> out;
    for (std::size_t i = 0; i < x.size(); ++i)
      out.push_back(mixed(std::span<const int>(a.items).subspan(i * x.size(), x.size()), x, col));
    return lanes_value(std::move(out));
  }

  Val cond() {
    const Val c = compare();
    const int col = (skip_space(), column());
    if (!accept('?')) return c;
    const Nest nest(*this, col);
    if (c.kind != Val::Kind::number)
      fail(col, "the condition before '?' must be a number, not " + kind_name(c.kind));
    const Val yes = cond();
    expect(':');
    const Val no = cond();
    if (yes.single() && no.single()) {
      if (at(yes.node).is_stream != at(no.node).is_stream)
        fail(col, "both sides of ':' must be streams, or both numbers");
      return one(conditional(c.node, yes.node, no.node, col));
    }
    const std::vector<int> y = as_lanes(yes, col), n = as_lanes(no, col);
    std::vector<int> out;
    for (std::size_t i = 0; i < y.size(); ++i) {
      if ((y[i] < 0) != (n[i] < 0))
        fail(col, "both sides of ':' must give lane " + std::to_string(i) + " a term, or neither");
      out.push_back(y[i] < 0 ? -1 : conditional(c.node, y[i], n[i], col));
    }
    return lanes_value(std::move(out));
  }
  int conditional(int c, int yes, int no, int col) {
    ExprNode n = make(Op::cond, col, c, at(yes).is_stream);
    n.b = yes, n.c = no;
    return add(std::move(n));
  }
  Val compare() {
    const Val a = sum();
    const int col = (skip_space(), column());
    if (!accept('<')) return a;
    return binary(Op::less, a, sum(), col);
  }
  Val sum() {
    Val a = product();
    for (;;) {
      const int col = (skip_space(), column());
      if (accept('+'))
        a = binary(Op::add, a, product(), col);
      else if (accept('-'))
        a = binary(Op::sub, a, product(), col);
      else
        return a;
    }
  }
  Val product() {
    Val a = unary();
    for (;;) {
      const int col = (skip_space(), column());
      if (accept('*'))
        a = binary(Op::mul, a, unary(), col);
      else if (accept('/'))
        a = binary(Op::div, a, unary(), col);
      else if (accept('@'))
        a = matmul(a, unary(), col);
      else
        return a;
    }
  }
  Val unary() {
    const int col = (skip_space(), column());
    if (!accept('-')) return power();
    const Nest nest(*this, col);
    const Val a = unary();
    if (a.single()) return one(add(make(Op::neg, col, a.node, at(a.node).is_stream)));
    std::vector<int> out;
    for (const int l : as_lanes(a, col)) out.push_back(l < 0 ? -1 : add(make(Op::neg, col, l, true)));
    return lanes_value(std::move(out));
  }
  Val power() {
    const Val a = primary();
    const int col = (skip_space(), column());
    if (!accept('^')) return a;
    const Nest nest(*this, col);
    const Val b = unary();
    if (!a.single() || !b.single())
      fail(col, "'^' raises numbers, not " + kind_name(a.single() ? b.kind : a.kind));
    return one(binary_nodes(Op::pow, a.node, b.node, col));
  }
  Val primary() {
    skip_space();
    const int col = column();
    if (pos_ >= text_.size()) fail(col, "expression ends too early");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      const Nest nest(*this, col);
      const Val e = cond();
      expect(')');
      return e;
    }
    if (c == '[') return literal(col);
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return one(number(col));
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name(col);
    fail(col, "unexpected '" + character_here() + "'");
  }
  // [a, b, ...]: numbers make a vector, vectors a matrix, streams lanes; n entries each.
  Val literal(int col) {
    ++pos_;
    const Nest nest(*this, col);
    std::vector<Val> entries;
    do entries.push_back(cond());
    while (accept(','));
    expect(']');
    if (int(entries.size()) != lanes_)
      fail(col, "a literal of " + std::to_string(entries.size()) + " entries in a block of " +
                    std::to_string(lanes_) +
                    " lanes (n is the largest lane index + 1 and the widest literal; every literal has n)");
    const Val::Kind k = entries.front().kind;
    Val out{k == Val::Kind::number   ? Val::Kind::vector
            : k == Val::Kind::vector ? Val::Kind::matrix
                                     : Val::Kind::lanes,
            -1,
            {}};
    for (const Val& e : entries) {
      if (e.kind != k || k == Val::Kind::matrix || k == Val::Kind::lanes)
        fail(col,
             "a literal's entries are all numbers (a vector), all vectors (a matrix) or all streams "
             "(lanes)");
      if (e.single())
        out.items.push_back(e.node);
      else
        out.items.insert(out.items.end(), e.items.begin(), e.items.end());
    }
    return out.kind == Val::Kind::lanes ? lanes_value(std::move(out.items)) : out;
  }
  int number(int col) {
    double v = 0;
    const auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), v);
    if (ec == std::errc::result_out_of_range)
      fail(col, "number " + std::string(text_.substr(pos_, std::size_t(end - text_.data()) - pos_)) +
                    " is out of a double's range (nonzero magnitudes from about 2.2e-308 to 1.8e308)");
    if (ec != std::errc()) fail(col, "malformed number");
    pos_ = static_cast<std::size_t>(end - text_.data());
    ExprNode n = make(Op::number, col);
    n.value = v;
    return add(std::move(n));
  }
  Val name(int col) {
    const std::size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    const std::string id(text_.substr(start, pos_ - start));
    static const std::map<std::string, Op, std::less<>> functions{
        {"N", Op::norm},      {"F", Op::branch},        {"Fqkv", Op::branch_qkv},   {"sqrt", Op::sqrt},
        {"floor", Op::floor}, {"sigmoid", Op::sigmoid}, {"sinkhorn", Op::sinkhorn}, {"Fv", Op::branch_value}};
    if (id == "sinkhorn") return sinkhorn(col);
    if (id == "Fv") return one(value_residual(col));
    if (const auto f = functions.find(id); f != functions.end()) return one(call(f->second, id, col));
    if (skip_space(); pos_ < text_.size() && text_[pos_] == '(') {  // a call: no name but these takes one
      std::string known;
      for (const auto& [fn, op] : functions) known += (known.empty() ? "" : ", ") + fn;
      fail(col, "unknown function '" + id + "' (known: " + known + ")");
    }
    static const std::map<std::string, ScalarVar, std::less<>> vars{{"k", ScalarVar::k},
                                                                    {"K", ScalarVar::K},
                                                                    {"b", ScalarVar::b},
                                                                    {"L", ScalarVar::L},
                                                                    {"attention", ScalarVar::attention},
                                                                    {"m_N", ScalarVar::m_N},
                                                                    {"m_L", ScalarVar::m_L},
                                                                    {"fan_in", ScalarVar::fan_in},
                                                                    {"fan_out", ScalarVar::fan_out}};
    if (const auto v = vars.find(id); v != vars.end()) {
      const bool of_matrix = v->second == ScalarVar::fan_in || v->second == ScalarVar::fan_out;
      if (of_matrix && scope_ != ScalarScope::matrix)
        fail(col, id + " is a matrix's; only a parametrization rule (param_rules) reads it");
      ExprNode n = make(Op::scalar_var, col);
      n.var = v->second;
      return one(add(std::move(n)));
    }
    if (id == "x") return lanes(col);
    if (id == "emb") return one(add(make(Op::embedding, col, -1, true)));
    if (id == "x0") {
      if (!paired_) fail(col, "x0 (the pair's input) needs a paired block: two expressions separated by ';'");
      if (lanes_ > 1) fail(col, "x0 (the pair's input) is one stream; a block of lanes cannot read it yet");
      return one(add(make(Op::pair_input, col, -1, true)));
    }
    ExprNode n = make(Op::param, col);
    n.name = id;
    return one(add(std::move(n)));
  }
  // x (the stream; with n > 1 the lanes) or x[i] (lane i; with n = 1 the stream).
  Val lanes(int col) {
    if (!accept('[')) {
      if (lanes_ == 1) return one(add(make(Op::stream, col, -1, true)));
      std::vector<int> all;
      for (int i = 0; i < lanes_; ++i) all.push_back(lane(i, col));
      return {Val::Kind::lanes, -1, all};
    }
    const int i = index("x[i] takes a lane number: 0, 1, ...");
    return one(lanes_ == 1 ? add(make(Op::stream, col, -1, true)) : lane(i, col));
  }
  // After a '[': a whole number below n (a lane, a row or a column), then ']'.
  int index(const std::string& why) {
    skip_space();
    int i = -1;
    const auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), i);
    if (ec != std::errc() || i < 0 || i >= lanes_) fail(column(), why);
    pos_ = static_cast<std::size_t>(end - text_.data());
    expect(']');
    return i;
  }
  // sinkhorn(M, iters): the doubly stochastic matrix of logits M (mHC's H_res), iters a whole number written
  // out; sinkhorn(M, iters)[i][j] one of its entries.
  Val sinkhorn(int col) {
    if (!accept('(')) fail(column(), "expected '(' after sinkhorn");
    const Nest nest(*this, column() - 1);
    const Val m = cond();
    if (m.kind != Val::Kind::matrix)
      fail(col, "sinkhorn(M, iters) takes a matrix of numbers, not " + kind_name(m.kind));
    expect(',');
    const int at_iters = (skip_space(), column());
    const Val iters = cond();
    // A copy: add() below may move the nodes (a reference into them would dangle; ASan caught it).
    const ExprNode it = at(iters.node);
    if (iters.kind != Val::Kind::number || it.op != Op::number || it.value != std::floor(it.value) ||
        it.value < 0 || it.value > kMaxSinkhornIterations)
      fail(at_iters, "sinkhorn's iterations are a whole number from 0 to " +
                         std::to_string(kMaxSinkhornIterations) + ", written as one");
    expect(')');
    std::vector<int> entries;
    for (std::size_t e = 0; e < m.items.size(); ++e) {
      ExprNode n = make(Op::sinkhorn, col);
      n.value = it.value, n.lane = int(e), n.args = m.items;
      entries.push_back(add(std::move(n)));
    }
    if (!accept('[')) return {Val::Kind::matrix, -1, entries};
    const int row = index("a row of sinkhorn(M, iters) is a whole number below " + std::to_string(lanes_));
    expect('[');
    const int col_index =
        index("a column of sinkhorn(M, iters) is a whole number below " + std::to_string(lanes_));
    return one(entries[std::size_t(row * lanes_ + col_index)]);
  }
  // Fv(u, lam): u a stream, lam a number (the weight of V_1 in the values).
  int value_residual(int col) {
    if (!accept('(')) fail(column(), "expected '(' after Fv");
    const Nest nest(*this, column() - 1);
    const int u = single(cond(), col, "Fv(u, lam)");
    if (!at(u).is_stream) fail(col, "Fv(u, lam) takes a stream u, not a number");
    expect(',');
    const int at_lam = (skip_space(), column());
    const int lam = single(cond(), at_lam, "Fv(u, lam)");
    if (at(lam).is_stream) fail(at_lam, "Fv(u, lam) takes a number lam (the weight of V_1), not a stream");
    expect(')');
    ExprNode n = make(Op::branch_value, col, u, true);
    n.b = lam;
    return add(std::move(n));
  }
  int lane(int i, int col) {
    ExprNode n = make(Op::lane, col, -1, true);
    n.lane = i;
    return add(std::move(n));
  }
  int call(Op op, const std::string& id, int col) {
    if (!accept('(')) fail(column(), "expected '(' after " + id);
    const Nest nest(*this, column() - 1);
    const int a = single(cond(), col, id + "(.)");
    expect(')');
    const bool takes_stream = op == Op::norm || op == Op::branch || op == Op::branch_qkv;
    if (at(a).is_stream != takes_stream)
      fail(col, id + "(.) takes a " + (takes_stream ? "stream" : "number") + ", not a " +
                    (takes_stream ? "number" : "stream"));
    return add(make(op, col, a, takes_stream));
  }
};

Expr parse_sublayer(std::string_view text, int offset, bool paired, int lanes) {
  auto [e, v] = Parser(text, offset, paired, lanes).parse_whole();
  if (v.kind == Val::Kind::number)
    throw ExprError(offset + 1, "a sublayer must be a stream (built from x), not a number");
  if (v.kind == Val::Kind::stream && lanes > 1)
    throw ExprError(offset + 1, "a block of " + std::to_string(lanes) +
                                    " lanes must give every lane a value (M @ x, v * s, [s, t, ...]), not "
                                    "one stream");
  if (v.kind != Val::Kind::stream && v.kind != Val::Kind::lanes)
    throw ExprError(offset + 1, "a sublayer must be a stream or lanes, not " + kind_name(v.kind));
  e.roots = v.kind == Val::Kind::stream ? std::vector<int>{v.node} : v.items;
  for (std::size_t i = 0; i < e.roots.size(); ++i)
    if (e.roots[i] < 0)
      throw ExprError(offset + 1,
                      "lane " + std::to_string(i) + " is identically zero (every term a literal 0)");
  e.root = e.roots.front();
  check_branch_calls(e, offset);
  return e;
}

}  // namespace

Block parse_block(std::string_view text) {
  Block b;
  b.text = std::string(text);
  const int lanes = lanes_in(text);
  const std::size_t semi = text.find(';');
  if (semi == std::string_view::npos) {
    b.sublayers.push_back(parse_sublayer(text, 0, false, lanes));
    return b;
  }
  if (text.find(';', semi + 1) != std::string_view::npos)
    throw ExprError(characters(text.substr(0, text.find(';', semi + 1))) + 1,
                    "at most two sublayers (one ';')");
  b.sublayers.push_back(parse_sublayer(text.substr(0, semi), 0, true, lanes));
  b.sublayers.push_back(
      parse_sublayer(text.substr(semi + 1), characters(text.substr(0, semi + 1)), true, lanes));
  return b;
}

Expr parse_scalar(std::string_view text, ScalarScope scope) {
  auto [e, v] = Parser(text, 0, false, lanes_in(text), scope).parse_whole();
  if (v.kind != Val::Kind::number) throw ExprError(1, "must be a number, not " + kind_name(v.kind));
  for (const ExprNode& n : e.nodes)
    if (is_branch(n.op)) throw ExprError(1, "must not call F");
  return e;
}

std::vector<std::string> params(const Expr& e) {
  std::vector<std::string> out;
  for (const auto& n : e.nodes)
    if (n.op == Op::param) out.push_back(n.name);
  return out;
}

namespace {
bool has_op(const Block& b, Op op) {
  for (const Expr& e : b.sublayers)
    for (const auto& n : e.nodes)
      if (n.op == op) return true;
  return false;
}
}  // namespace

bool reads_embedding(const Block& b) {
  return has_op(b, Op::embedding);
}

bool reads_first_values(const Block& b) {
  return has_op(b, Op::branch_value);
}

void check_expression_length(std::string_view text) {
  if (text.size() > kMaxExpressionLength)
    throw ExprError(static_cast<int>(kMaxExpressionLength) + 1,
                    "the expression is " + std::to_string(characters(text)) + " characters long; at most " +
                        std::to_string(kMaxExpressionLength) + " bytes are read");
}

}  // namespace normsim::vocab
