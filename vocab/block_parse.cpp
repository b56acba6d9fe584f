// The block language's parser (vocab/block_expr.hpp): recursive descent over the text with the types
// (stream or number) checked as each node is made, so an error points at the column that caused it.
//   cond    := compare ['?' cond ':' cond]
//   compare := sum ['<' sum]
//   sum     := product (('+' | '-') product)*
//   product := unary (('*' | '/') unary)*
//   unary   := '-' unary | power
//   power   := primary ['^' unary]          (right-associative: 2^3^2 = 2^9; -2^2 = -(2^2); 2^-1 = 0.5)
//   primary := number | name | name '(' cond ')' | '(' cond ')'
#include <cctype>
#include <charconv>
#include <map>
#include <string>
#include <vector>

#include "vocab/block_expr.hpp"

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

class Parser {
 public:
  // offset: the characters (code points) before this expression in the block text.
  Parser(std::string_view text, int offset, bool paired, ScalarScope scope = ScalarScope::sublayer)
      : text_(text), offset_(offset), paired_(paired), scope_(scope) {
    chars_before_.reserve(text.size() + 1);
    int n = 0;
    for (const char c : text) {
      chars_before_.push_back(n);
      n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // a UTF-8 continuation byte is no new character
    }
    chars_before_.push_back(n);
  }

  Expr parse_whole() {
    expr_.root = cond();
    skip_space();
    if (pos_ < text_.size()) fail(column(), "unexpected '" + character_here() + "'");
    return std::move(expr_);
  }

 private:
  std::string_view text_;
  int offset_;                     // characters before this expression in the block text
  std::vector<int> chars_before_;  // chars_before_[i]: the characters in text_[0, i)
  bool paired_;
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
      if (m.op == n.op && m.value == n.value && m.var == n.var && m.name == n.name && m.a == n.a &&
          m.b == n.b && m.c == n.c)
        return static_cast<int>(i);
    }
    expr_.nodes.push_back(std::move(n));
    return static_cast<int>(expr_.nodes.size()) - 1;
  }
  int binary(Op op, int a, int b, int col) {
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

  int cond() {
    const int c = compare();
    const int col = (skip_space(), column());
    if (!accept('?')) return c;
    const Nest nest(*this, col);
    if (at(c).is_stream) fail(col, "the condition before '?' must be a number, not a stream");
    const int yes = cond();
    expect(':');
    const int no = cond();
    if (at(yes).is_stream != at(no).is_stream)
      fail(col, "both sides of ':' must be streams, or both numbers");
    ExprNode n = make(Op::cond, col, c, at(yes).is_stream);
    n.b = yes, n.c = no;
    return add(std::move(n));
  }
  int compare() {
    const int a = sum();
    const int col = (skip_space(), column());
    if (!accept('<')) return a;
    return binary(Op::less, a, sum(), col);
  }
  int sum() {
    int a = product();
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
  int product() {
    int a = unary();
    for (;;) {
      const int col = (skip_space(), column());
      if (accept('*'))
        a = binary(Op::mul, a, unary(), col);
      else if (accept('/'))
        a = binary(Op::div, a, unary(), col);
      else
        return a;
    }
  }
  int unary() {
    const int col = (skip_space(), column());
    if (!accept('-')) return power();
    const Nest nest(*this, col);
    const int a = unary();
    return add(make(Op::neg, col, a, at(a).is_stream));
  }
  int power() {
    const int a = primary();
    const int col = (skip_space(), column());
    if (!accept('^')) return a;
    const Nest nest(*this, col);
    return binary(Op::pow, a, unary(), col);
  }
  int primary() {
    skip_space();
    const int col = column();
    if (pos_ >= text_.size()) fail(col, "expression ends too early");
    const char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      const Nest nest(*this, col);
      const int e = cond();
      expect(')');
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return number(col);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return name(col);
    fail(col, "unexpected '" + character_here() + "'");
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
  int name(int col) {
    const std::size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    const std::string id(text_.substr(start, pos_ - start));
    static const std::map<std::string, Op, std::less<>> functions{{"N", Op::norm},
                                                                  {"F", Op::branch},
                                                                  {"Fqkv", Op::branch_qkv},
                                                                  {"sqrt", Op::sqrt},
                                                                  {"floor", Op::floor}};
    if (const auto f = functions.find(id); f != functions.end()) return call(f->second, id, col);
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
      return add(std::move(n));
    }
    if (id == "x") return add(make(Op::stream, col, -1, true));
    if (id == "emb") return add(make(Op::embedding, col, -1, true));
    if (id == "x0") {
      if (!paired_) fail(col, "x0 (the pair's input) needs a paired block: two expressions separated by ';'");
      return add(make(Op::pair_input, col, -1, true));
    }
    ExprNode n = make(Op::param, col);
    n.name = id;
    return add(std::move(n));
  }
  int call(Op op, const std::string& id, int col) {
    if (!accept('(')) fail(column(), "expected '(' after " + id);
    const Nest nest(*this, column() - 1);
    const int a = cond();
    expect(')');
    const bool takes_stream = op == Op::norm || op == Op::branch || op == Op::branch_qkv;
    if (at(a).is_stream != takes_stream)
      fail(col, id + "(.) takes a " + (takes_stream ? "stream" : "number") + ", not a " +
                    (takes_stream ? "number" : "stream"));
    return add(make(op, col, a, takes_stream));
  }
};

// How many times F runs on the way to node i; both arms of a condition must agree.
int branch_calls(const Expr& e, int i) {
  if (i < 0) return 0;
  const ExprNode& n = e.node(i);
  if (n.op == Op::cond) {
    const int yes = branch_calls(e, n.b), no = branch_calls(e, n.c);
    if (yes != no) throw ExprError(n.column, "both sides of ':' must call F equally often");
    return branch_calls(e, n.a) + yes;
  }
  const int own = (n.op == Op::branch || n.op == Op::branch_qkv) ? 1 : 0;
  return own + branch_calls(e, n.a) + branch_calls(e, n.b) + branch_calls(e, n.c);
}

Expr parse_sublayer(std::string_view text, int offset, bool paired) {
  Expr e = Parser(text, offset, paired).parse_whole();
  const ExprNode& root = e.node(e.root);
  if (!root.is_stream)
    throw ExprError(offset + 1, "a sublayer must be a stream (built from x), not a number");
  if (const int n = branch_calls(e, e.root); n != 1)
    throw ExprError(offset + 1, "a sublayer must call its branch F (or Fqkv) exactly once, not " +
                                    std::to_string(n) + " times");
  return e;
}

}  // namespace

Block parse_block(std::string_view text) {
  Block b;
  b.text = std::string(text);
  const std::size_t semi = text.find(';');
  if (semi == std::string_view::npos) {
    b.sublayers.push_back(parse_sublayer(text, 0, false));
    return b;
  }
  if (text.find(';', semi + 1) != std::string_view::npos)
    throw ExprError(characters(text.substr(0, text.find(';', semi + 1))) + 1,
                    "at most two sublayers (one ';')");
  b.sublayers.push_back(parse_sublayer(text.substr(0, semi), 0, true));
  b.sublayers.push_back(parse_sublayer(text.substr(semi + 1), characters(text.substr(0, semi + 1)), true));
  return b;
}

Expr parse_scalar(std::string_view text, ScalarScope scope) {
  Expr e = Parser(text, 0, false, scope).parse_whole();
  if (e.node(e.root).is_stream) throw ExprError(1, "must be a number, not a stream");
  if (branch_calls(e, e.root) != 0) throw ExprError(1, "must not call F");
  return e;
}

std::vector<std::string> params(const Expr& e) {
  std::vector<std::string> out;
  for (const auto& n : e.nodes)
    if (n.op == Op::param) out.push_back(n.name);
  return out;
}

bool reads_embedding(const Block& b) {
  for (const Expr& e : b.sublayers)
    for (const auto& n : e.nodes)
      if (n.op == Op::embedding) return true;
  return false;
}

void check_expression_length(std::string_view text) {
  if (text.size() > kMaxExpressionLength)
    throw ExprError(static_cast<int>(kMaxExpressionLength) + 1,
                    "the expression is " + std::to_string(characters(text)) + " characters long; at most " +
                        std::to_string(kMaxExpressionLength) + " bytes are read");
}

}  // namespace normsim::vocab
