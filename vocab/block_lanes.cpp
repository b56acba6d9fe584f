#include "vocab/block_lanes.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <string>
#include <vector>

namespace normsim::vocab {
namespace {

using Op = ExprNode::Op;

// Whether text[0, end) ends in the name x (spaces before end skipped): then a '[' at end indexes a lane.
bool after_x(std::string_view text, std::size_t end) {
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  if (end == 0 || text[end - 1] != 'x') return false;
  if (end == 1) return true;
  const char before = text[end - 2];
  return !(std::isalnum(static_cast<unsigned char>(before)) || before == '_');
}

// The lane number written after a '[' at `open`, or -1 (the parser reports a malformed one).
int lane_index(std::string_view text, std::size_t open) {
  std::size_t at = open + 1;
  while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  int i = -1;
  const auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), i);
  return ec == std::errc() ? i : -1;
}

// How many times F runs on the way to node i; both arms of a condition must agree.
int branch_calls(const Expr& e, int i) {
  if (i < 0) return 0;
  const ExprNode& n = e.node(i);
  if (n.op == Op::cond) {
    const int yes = branch_calls(e, n.b), no = branch_calls(e, n.c);
    if (yes != no) throw ExprError(n.column, "both sides of ':' must call F equally often");
    return branch_calls(e, n.a) + yes;
  }
  const int own = is_branch(n.op) ? 1 : 0;
  return own + branch_calls(e, n.a) + branch_calls(e, n.b) + branch_calls(e, n.c);
}

// The F nodes node i can reach, whichever arm a condition takes.
void branch_nodes(const Expr& e, int i, std::set<int>& out) {
  if (i < 0) return;
  const ExprNode& n = e.node(i);
  if (is_branch(n.op)) out.insert(i);
  for (const int child : {n.a, n.b, n.c}) branch_nodes(e, child, out);
}

}  // namespace

int lanes_in(std::string_view text) {
  struct Open {
    bool literal;
    int column;  // of the '['
    int commas = 0, parens = 0;
  };
  std::vector<Open> open;
  int n = 1, column = 0;
  const auto widen = [&](int lanes, int at) {
    if (lanes > kMaxLanes)
      throw ExprError(at, std::to_string(lanes) + " lanes; a block has at most " + std::to_string(kMaxLanes));
    n = std::max(n, lanes);
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    column += (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // characters, not UTF-8 bytes
    if (c == '[') {
      const bool literal = !after_x(text, i);
      if (!literal) widen(lane_index(text, i) + 1, column);
      open.push_back({literal, column});
    } else if (c == ']' && !open.empty()) {
      if (open.back().literal) widen(open.back().commas + 1, open.back().column);
      open.pop_back();
    } else if (!open.empty() && open.back().literal) {
      Open& o = open.back();
      o.parens += c == '(' ? 1 : c == ')' ? -1 : 0;
      o.commas += c == ',' && o.parens == 0;
    }
  }
  return n;
}

void check_branch_calls(const Expr& e, int offset) {
  if (e.lanes() == 1) {
    if (const int n = branch_calls(e, e.root); n != 1)
      throw ExprError(offset + 1, "a sublayer must call its branch F (or Fqkv, Fv) exactly once, not " +
                                      std::to_string(n) + " times");
    return;
  }
  std::set<int> reached;
  for (int lane = 0; lane < e.lanes(); ++lane) {
    const int root = e.roots[std::size_t(lane)];
    if (const int n = branch_calls(e, root); n > 1)
      throw ExprError(offset + 1, "lane " + std::to_string(lane) + " calls its branch F (or Fqkv, Fv) " +
                                      std::to_string(n) + " times; a unit calls it once");
    branch_nodes(e, root, reached);
  }
  if (reached.empty())
    throw ExprError(offset + 1, "a sublayer must call its branch F (or Fqkv, Fv) exactly once, not 0 times");
  if (reached.size() > 1)
    throw ExprError(
        e.node(*std::next(reached.begin())).column,
        "the lanes reach " + std::to_string(reached.size()) +
            " different branch calls; a unit calls F once (give every lane the same F(...), and put "
            "a condition inside its argument)");
}

}  // namespace normsim::vocab
