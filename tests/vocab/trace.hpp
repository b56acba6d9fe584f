// Test helpers of the block language: a stream interpreter that writes what it was asked to do (so the
// walk's order and shape are visible, and its branch calls counted), and the column of a parse error.
#pragma once
#include <string>
#include <string_view>

#include "vocab/block_expr.hpp"

namespace normsim::vocab::test {

struct Trace {
  using Value = std::string;
  std::string log;
  int branches = 0;
  Value norm(Value a) { return note("N(" + a + ")"); }
  Value add(Value a, Value b) { return note("(" + a + "+" + b + ")"); }
  Value scale(Value a, double s) { return note(std::to_string(s).substr(0, 4) + "*" + a); }
  Value branch(Value u, bool qkv) {
    ++branches;
    return note(std::string(qkv ? "Fqkv" : "F") + "(" + u + ")");
  }
  Value branch_value(Value u, double lam) {
    ++branches;
    return note("Fv(" + u + "," + std::to_string(lam).substr(0, 4) + ")");
  }
  Value note(Value v) {
    log += v + ";";
    return v;
  }
};

// The column parse_block reports for `text`, or 0 when it parses.
inline int error_column(std::string_view text) {
  try {
    parse_block(text);
  } catch (const ExprError& e) {
    return e.column();
  }
  return 0;
}

}  // namespace normsim::vocab::test
