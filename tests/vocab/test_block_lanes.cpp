// Lanes in the block language (docs/design/multistream.md 3.2, step S1): n read from the block, literals,
// '@', the lowering into n roots with literal zeros dropped, errors at their column, one F over all roots,
// and the built-in texts written back byte for byte.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "trace.hpp"
#include "vocab/block_eval.hpp"
#include "vocab/block_expr.hpp"
#include "vocab/builtin_blocks.hpp"

using namespace normsim::vocab;
using normsim::vocab::test::error_column;
using normsim::vocab::test::Trace;

namespace {

ScalarEnv env_at(int k) {
  ScalarEnv env;
  env.k = k, env.K = 8, env.b = k, env.L = 8;
  env.param = [](const std::string& name) -> double { throw ExprError(1, name); };
  return env;
}

std::vector<std::string> lanes_of(std::string_view text, const std::vector<std::string>& x, int k = 0) {
  const Block b = parse_block(text);
  Trace t;
  return eval_lanes<Trace>(b.sublayers[0], t, env_at(k), x, "x0", "e");
}

}  // namespace

TEST_CASE("lanes_parse_widths") {
  // n is the largest lane index + 1 and the literals' width.
  CHECK(parse_block("x + F(N(x))").lanes() == 1);
  CHECK(parse_block("[[1,0],[0,1]] @ x + [1,1] * F(N([1,0] @ x))").lanes() == 2);
  CHECK(parse_block("[x[1], x[0] + F(N(x[0]))]").lanes() == 2);
  const Block four = parse_block(
      "[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]] @ x + [2*sigmoid(1),2*sigmoid(1),2*sigmoid(1),2*sigmoid(1)] "
      "* "
      "F(N([sigmoid(1),0.5,0.5,0.5] @ x))");
  CHECK(four.lanes() == 4);
  CHECK(four.sublayers[0].roots.size() == 4);
  // n = 1 literals are the stream: [1] @ x is x itself, one root, printed as the stream.
  CHECK(to_text(parse_block("[1] @ x + [2] * F(N(x[0]))")) == "x + 2 * F(N(x))");
  // A paired block has the same n in both expressions; lanes print as their literal and parse back to it.
  const Block pair = parse_block("[[0,1],[1,0]] @ x + [1,0] * F(N(x[0])); x + [0,1] * F(N(x[1]))");
  CHECK(pair.span() == 2);
  CHECK(to_text(pair) == "[x[1] + F(N(x[0])), x[0]]; [x[0], x[1] + F(N(x[1]))]");
  CHECK(to_text(parse_block(to_text(pair))) == to_text(pair));
  // sigmoid is a number function: its value, and the lane coefficients it makes.
  const Expr s = parse_scalar("sigmoid(1)");
  CHECK(eval_scalar(s, s.root, env_at(0)) == Approx(0.7310585786300049).epsilon(1e-15));
}

TEST_CASE("lanes_reject_mismatch") {
  // A literal of the wrong width, at its '[': n is the widest (3 here), so the first narrower one is named.
  CHECK(error_column("[[1,0],[0,1]] @ x + [1,1,1] * F(N(x[0]))") == 2);
  CHECK_THROWS_WITH(parse_block("[[1,0],[0,1]] @ x + [1,1,1] * F(N(x[0]))"),
                    Catch::Contains("a literal of 2 entries in a block of 3 lanes"));
  CHECK(error_column("x + [1,1] * F(N(x[0])) + [[1,0],[0,1,0]] @ x") == 5);
  CHECK(error_column("x[2] + [1,1] * F(N(x[0]))") == 8);  // n = 3 from x[2]
  // Bare x is the lanes in a block of n > 1: as a stream it is refused, at the function or operator.
  CHECK(error_column("[[1,0],[0,1]] @ x + [1,1] * F(N(x))") == 31);
  CHECK_THROWS_WITH(parse_block("[[1,0],[0,1]] @ x + [1,1] * F(N(x))"),
                    Catch::Contains("N(.) takes one stream, not the block's 2 lanes"));
  CHECK(error_column("x + [1,1] * F(N(x[0])) + x[0]") == 24);  // lanes plus a stream, at '+'
  CHECK_THROWS_WITH(parse_block("x[0] + F(N(x[1]))"), Catch::Contains("must give every lane a value"));
  // Two F nodes over the roots, at the second; one lane calling F twice; none at all.
  CHECK(error_column("[x[0] + F(N(x[0])), x[1] + F(N(x[1]))]") == 28);
  CHECK_THROWS_WITH(parse_block("[x[0] + F(N(x[0])), x[1] + F(N(x[1]))]"),
                    Catch::Contains("the lanes reach 2 different branch calls"));
  CHECK_THROWS_WITH(parse_block("[x[0] + F(N(x[0])) + F(N(x[0])), x[1]]"), Catch::Contains("lane 0 calls"));
  CHECK_THROWS_WITH(parse_block("[[0,1],[1,0]] @ x"), Catch::Contains("exactly once, not 0 times"));
  // A lane with no term, a malformed index, x0 with lanes, '@' on a number, a mixed literal.
  CHECK_THROWS_WITH(parse_block("[[1,0],[0,0]] @ x + [1,0] * F(N(x[0]))"),
                    Catch::Contains("lane 1 is identically zero"));
  CHECK(error_column("x[a] + F(x)") == 3);
  CHECK_THROWS_WITH(parse_block("x + [1,1] * F(N(x[0])); x + [1,1] * F(x0)"), Catch::Contains("x0"));
  CHECK(error_column("2 @ x + F(N(x))") == 3);
  CHECK(error_column("[1, x[0]] * F(N(x[1]))") == 1);
  CHECK_THROWS_AS(parse_scalar("[1,2]"), ExprError);
}

TEST_CASE("lanes_zero_literal_dropped") {
  // A literal 0 is no term (0 * x would turn an Inf into a NaN), a literal 1 no scale: the identity mixing
  // and [1,0] @ x are the lanes themselves, and no number node reaches a root.
  CHECK(to_text(parse_block("[[1,0],[0,1]] @ x + [1,1] * F(N([1,0] @ x))")) ==
        "[x[0] + F(N(x[0])), x[1] + F(N(x[0]))]");
  CHECK(to_text(parse_block("[[0.5,0],[0,2]] @ x + [0,3] * F(N([0,1] @ x))")) ==
        "[0.5 * x[0], 2 * x[1] + 3 * F(N(x[1]))]");
  // A coefficient that is an expression (even one worth 0) stays: only literals are lowered away.
  CHECK(to_text(parse_block("[[1,k],[0,1]] @ x + [1,1] * F(N(x[0]))")) ==
        "[x[0] + k * x[1] + F(N(x[0])), x[1] + F(N(x[0]))]");
  CHECK(lanes_of("[[0,1],[1,0]] @ x + [1,0] * F(N(x[0]))", {"a", "b"}) ==
        std::vector<std::string>{"(b+F(N(a)))", "a"});
}

namespace {
// The nodes of two parses agree in everything but their columns.
bool same_nodes(const Expr& a, const Expr& b) {
  if (a.nodes.size() != b.nodes.size() || a.roots != b.roots || a.root != b.root) return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    const ExprNode &m = a.nodes[i], &n = b.nodes[i];
    if (m.op != n.op || m.value != n.value || m.var != n.var || m.name != n.name || m.lane != n.lane ||
        m.a != n.a || m.b != n.b || m.c != n.c || m.is_stream != n.is_stream)
      return false;
  }
  return true;
}
}  // namespace

TEST_CASE("builtin_blocks_to_text_unchanged") {
  // Built-in texts are CSV key fields: lanes must not move a byte of what they print. Each is one lane, one
  // root; its text written back parses to the same nodes and writes back to itself. (to_text spells numbers
  // the shortest way to_chars does, so mix's 1e-9 prints as 1e-09, as before lanes; the printed texts were
  // compared with main's `normsim list placements` byte for byte.)
  for (const BuiltinPlacement& p : builtin_placements()) {
    if (p.block.empty()) continue;
    INFO(p.name);
    const Block b = parse_block(p.block);
    CHECK(b.lanes() == 1);
    const Block again = parse_block(to_text(b));
    CHECK(to_text(again) == to_text(b));
    for (std::size_t j = 0; j < b.sublayers.size(); ++j) {
      const Expr& e = b.sublayers[j];
      CHECK(e.roots == std::vector<int>{e.root});
      CHECK(same_nodes(e, again.sublayers[j]));
      for (const ExprNode& n : e.nodes) CHECK(n.op != ExprNode::Op::lane);
    }
    // '^' is a token no built-in uses either; mix's 1e-9 is the one text written back otherwise.
    CHECK(p.block.find('^') == std::string_view::npos);
    CHECK(to_text(b) == (p.id == Placement::mix
                             ? "b < floor(mix_fraction * L + 1e-09) ? N(x + F(x)) : x + F(N(x))"
                             : std::string(p.block)));
  }
}

TEST_CASE("eval_lanes_shares_F") {
  const Block hc = parse_block("[[1,0,0],[0,1,0],[0,0,1]] @ x + [1,1,1] * F(N([1,0,0] @ x))");
  Trace t;
  const std::vector<std::string> x{"a", "b", "c"};
  const auto out = eval_lanes<Trace>(hc.sublayers[0], t, env_at(0), x, "x0", "e");
  CHECK(t.branches == 1);  // one branch call for three roots
  CHECK(out == std::vector<std::string>{"(a+F(N(a)))", "(b+F(N(a)))", "(c+F(N(a)))"});
  // A condition chooses the branch's input lane per sublayer (HC's r = k mod n), still one call.
  const std::string r = "[[1,0],[0,1]] @ x + [1,1] * F(N(k - 2*floor(k/2) < 1 ? x[0] : x[1]))";
  CHECK(lanes_of(r, {"a", "b"}, 3) == std::vector<std::string>{"(a+F(N(b)))", "(b+F(N(b)))"});
  // n = 1: eval_lanes is eval_stream.
  const Block pre = parse_block("x + F(N(x))");
  Trace u, v;
  const std::vector<std::string> one{"a"};
  CHECK(eval_lanes<Trace>(pre.sublayers[0], u, env_at(0), one, "a", "e") ==
        std::vector<std::string>{
            eval_stream(pre.sublayers[0], pre.sublayers[0].root, v, env_at(0), "a", "a", "e")});
  CHECK(u.log == v.log);
}

TEST_CASE("lanes are bounded") {
  CHECK_THROWS_WITH(parse_block("x[16] + F(x[0])"),
                    Catch::Contains("column 2: 17 lanes; a block has at most 16"));
  CHECK_THROWS_WITH(parse_block("x[99999999999] + F(x)"), Catch::Contains("x[i] takes a lane number"));
  std::string wide = "[1";
  for (int i = 0; i < 20; ++i) wide += ",1";
  CHECK_THROWS_WITH(parse_block("x + " + wide + "] * F(x)"), Catch::Contains("column 5: 21 lanes"));
}

// sinkhorn(M, iters) as mHC's code computes it (lucidrains/hyper-connections
// manifold_constrained_hyper_connections.py @4775103 l.49-61): at lucidrains' init, logits I_4, the matrix is
// exp(I)/(e + 3), diagonal e/(e + 3) = 0.47537 and off-diagonal 1/(e + 3) = 0.17488 (design note 1b); a
// non-symmetric matrix of logits in [-1, 1] becomes doubly stochastic: after 20 column-then-row passes the
// rows sum to 1 within rounding (the last pass) and the columns within 1e-12 (the passes contract the
// columns' error by far more than 1e-12 over 20 steps at these logits; measured ~1e-16).
TEST_CASE("sinkhorn_doubly_stochastic") {
  const std::string eye = "[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]";
  const double e = std::exp(1.0);
  const Expr diag = parse_scalar("sinkhorn(" + eye + ", 20)[2][2]");
  const Expr off = parse_scalar("sinkhorn(" + eye + ", 20)[0][3]");
  CHECK(eval_scalar(diag, diag.root, env_at(0)) == Approx(e / (e + 3)).epsilon(1e-14));
  CHECK(eval_scalar(off, off.root, env_at(0)) == Approx(1 / (e + 3)).epsilon(1e-14));
  const std::string m = "[[0.5, -1, 0.2], [1, 0, -0.3], [0.1, 0.7, -0.5 * k]]";
  for (int k : {0, 1}) {
    double rows[3] = {0, 0, 0}, cols[3] = {0, 0, 0};
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) {
        const Expr x =
            parse_scalar("sinkhorn(" + m + ", 20)[" + std::to_string(r) + "][" + std::to_string(c) + "]");
        const double v = eval_scalar(x, x.root, env_at(k));
        CHECK(v > 0);
        rows[r] += v, cols[c] += v;
      }
    for (int i = 0; i < 3; ++i) {
      CHECK(rows[i] == Approx(1).margin(1e-15));
      CHECK(cols[i] == Approx(1).margin(1e-12));
    }
  }
  // As the residual mixing of a block of lanes (mHC's H_res): one coefficient node per entry, the matrix
  // written back whole, and errors at their column.
  const Block mhc = parse_block("sinkhorn(" + eye + ", 20) @ x + [1,1,1,1] * F(N(x[0]))");
  CHECK(mhc.lanes() == 4);
  CHECK(to_text(parse_block(to_text(mhc))) == to_text(mhc));
  CHECK(to_text(mhc).starts_with(
      "[sinkhorn([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], 20)[0][0] * x[0]"));
  CHECK(error_column("sinkhorn([[1,0],[0,1]], k) @ x + [1,1] * F(N(x[0]))") == 25);
  CHECK(error_column("sinkhorn([1,0], 20) @ x + [1,1] * F(N(x[0]))") == 1);
  CHECK(error_column("sinkhorn([[1,0],[0,1]], 20)[2][0] * x[0] + [1,1] * F(N(x[0]))") == 29);
}
