// The block language: parsing, types, error columns, the text written back, numbers, and the order in
// which a stream interpreter is driven.
#include <catch2/catch.hpp>
#include <string>

#include "trace.hpp"
#include "vocab/block_eval.hpp"
#include "vocab/block_expr.hpp"
#include "vocab/builtin_blocks.hpp"

using namespace normsim::vocab;
using normsim::vocab::test::error_column;
using normsim::vocab::test::Trace;

namespace {

ScalarEnv env_at(int k, int K) {
  ScalarEnv env;
  env.k = k, env.K = K, env.b = k, env.L = K;
  env.param = [](const std::string& name) { return name == "alpha" ? 0.5 : throw ExprError(1, name); };
  return env;
}

}  // namespace

TEST_CASE("blocks parse, and write back as the same expression") {
  for (const char* text :
       {"x + F(N(x))", "N(x + F(x))", "x + N(F(N(x)))", "N(x) + F(N(x))", "x + alpha * F(x)",
        "x + F(N(x) / sqrt(b + 1))", "b < floor(0.5 * L) ? N(x + F(x)) : x + F(N(x))",
        "attention ? x + Fqkv(x) : N(x) + F(N(x))", "N(x + F(x)); N(x + F(x) + x0)", "x - F(x)", "-x + F(x)",
        "x + F(x) * (1 - 1 / K)"}) {
    INFO(text);
    const Block b = parse_block(text);
    CHECK(to_text(b) == text);
    CHECK(to_text(parse_block(to_text(b))) == to_text(b));
  }
  CHECK(parse_block("N(x+F(x));N(x+F(x)+x0)").span() == 2);
  CHECK(to_text(parse_block("(x + (F(x)))")) == "x + F(x)");
  CHECK(to_text(parse_block("x + (F(x) + x)")) == "x + (F(x) + x)");  // not associative in floating point
}

TEST_CASE("parse errors name the column that caused them") {
  CHECK(error_column("x + F(x") == 8);           // missing ')'
  CHECK(error_column("x + F(x) * F(x)") == 10);  // stream times stream, at '*'
  CHECK(error_column("x + 1") == 3);             // stream plus number, at '+'
  CHECK(error_column("x + F(N(x)) + F(x)") == 1);
  CHECK(error_column("x + N(x)") == 1);  // no F
  CHECK(error_column("x + F(sqrt(x))") == 7);
  CHECK(error_column("x + F(x0)") == 7);  // x0 outside a pair
  CHECK(error_column("N(x + F(x)); x + $") == 18);
  CHECK(error_column("x + F(x) )") == 10);
  CHECK(error_column("k < 1 ? x + F(x) : x") == 7);  // arms call F differently
  CHECK_THROWS_WITH(parse_block("x + F(x) * F(x)"), Catch::Contains("cannot multiply two streams"));
  CHECK_THROWS_AS(parse_scalar("x"), ExprError);
  // A call of a name that is no function is reported at the name, before its type spoils the sum.
  CHECK(error_column("x + foo(x)") == 5);
  CHECK(error_column("x + G (x)") == 5);
  CHECK(error_column("N(x + F(x)); x0 + F(alpha(x))") == 21);
  CHECK_THROWS_WITH(
      parse_block("x + foo(x)"),
      Catch::Contains("unknown function 'foo' (known: F, Fqkv, Fv, N, floor, sigmoid, sinkhorn, sqrt)"));
  CHECK_THROWS_WITH(parse_scalar("1 / sqrtt(K)"), Catch::Contains("unknown function 'sqrtt'"));
  CHECK_THROWS_AS(parse_scalar("1 / "), ExprError);
}

// Issue 25 5-6: every interpreter walks an expression recursively, so depth and length are bounded at the
// edge, with a column (a crash at ~16,500 nested parentheses, ~5,600 nested '-' or N(; quadratic parsing).
TEST_CASE("deep or long expressions are refused at a column, never a crash") {
  std::string deep = "x + F(x)";
  for (int i = 0; i < 1000; ++i) deep = "(" + deep + ")";  // within the length bound: the depth decides
  CHECK_THROWS_WITH(parse_block(deep), Catch::Contains("column 65: nested deeper than 64 levels"));
  std::string minus = "x";
  for (int i = 0; i < 4000; ++i) minus = "-" + minus;
  CHECK_THROWS_WITH(parse_block(minus + " + F(x)"), Catch::Contains("nested deeper than 64 levels"));
  std::string norms = "x";
  for (int i = 0; i < 1300; ++i) norms = "N(" + norms + ")";
  CHECK_THROWS_WITH(parse_block(norms + " + F(x)"), Catch::Contains("nested deeper than 64 levels"));
  std::string sum = "x + F(x)";
  for (int i = 0; i < 8000; ++i) sum += " + x";
  // Length is bounded at the config's edge (a user's text), not on texts normsim renders and reads back.
  CHECK_THROWS_WITH(check_expression_length(sum),
                    Catch::Contains("column 4097: the expression is 32008 characters long"));
  CHECK_THROWS_WITH(check_expression_length(std::string(5000, '1')), Catch::Contains("at most 4096 bytes"));
  CHECK_NOTHROW(check_expression_length(std::string(4096, '1')));
  std::string ok = "x + F(x)";
  for (int i = 0; i < 60; ++i) ok = "(" + ok + ")";
  CHECK(parse_block(ok).span() == 1);  // 60 levels: within the bound
}

// Issue 25 13: a non-ASCII character is one column and is named whole (its UTF-8 bytes, not one of them); a
// number past a double's range says so.
TEST_CASE("columns count characters, and numbers out of range say so") {
  CHECK_THROWS_WITH(parse_block("x + F(x) + é"), Catch::Contains("column 12: unexpected 'é'"));
  CHECK_THROWS_WITH(parse_block("é + F(x)"), Catch::Equals("column 1: unexpected 'é'"));
  CHECK_THROWS_WITH(parse_block("N(x + F(x)); x + F(x) + ü ü"), Catch::Contains("column 25"));
  CHECK_THROWS_WITH(parse_scalar("1e400"), Catch::Contains("number 1e400 is out of a double's range"));
}

TEST_CASE("numbers of an expression follow the sublayer and the config") {
  const Expr e = parse_scalar("1 / sqrt(K) + alpha * (k < 2) - floor(2.5)");
  CHECK(eval_scalar(e, e.root, env_at(1, 4)) == 1.0 / 2 + 0.5 - 2);
  CHECK(eval_scalar(e, e.root, env_at(3, 4)) == 1.0 / 2 - 2);
  CHECK(params(e) == std::vector<std::string>{"alpha"});
}

// docs/design/parametrization.md 3.1: '^' binds tighter than unary minus on its left and takes a unary
// exponent on its right, right-associative (as in Python and Fortran).
TEST_CASE("pow_precedence") {
  const ScalarEnv env = env_at(0, 4);
  const auto value = [&](const char* text) {
    const Expr e = parse_scalar(text);
    return eval_scalar(e, e.root, env);
  };
  CHECK(value("-2^2") == -4.0);
  CHECK(value("2^3^2") == 512.0);
  CHECK(value("2^-1") == 0.5);
  CHECK(value("(-2)^2") == 4.0);
  CHECK(value("(2^3)^2") == 64.0);
  CHECK(value("2 * 3^2") == 18.0);
  CHECK(value("K^0.5 + 1") == 3.0);
  CHECK_THROWS_WITH(parse_block("x^2 + F(x)"), Catch::Contains("column 2: '^' raises numbers, not streams"));
  CHECK_THROWS_WITH(parse_scalar("2^"), Catch::Contains("column 3: expression ends too early"));
}

TEST_CASE("pow_to_text_roundtrip") {
  for (const char* text : {"2^3^2", "-2^2", "2^-1", "(-2)^2", "(2^3)^2", "L^-0.5", "1 / m_N * m_L^-0.5",
                           "(m_N * m_L)^(1 + k)", "2^-(1 + K)"}) {
    INFO(text);
    const Expr e = parse_scalar(text);
    CHECK(to_text(e) == text);
    const Expr again = parse_scalar(to_text(e));
    CHECK(eval_scalar(again, again.root, env_at(1, 4)) == eval_scalar(e, e.root, env_at(1, 4)));
  }
  CHECK(to_text(parse_block("x + F(x) * 2^-1")) == "x + F(x) * 2^-1");
}

// m_N and m_L read the environment; fan_in and fan_out only a parametrization rule's (scope matrix).
TEST_CASE("scalar variables of width, depth and the matrix") {
  ScalarEnv env = env_at(0, 4);
  env.m_N = 4, env.m_L = 2, env.fan_in = 256, env.fan_out = 1024;
  const Expr rule = parse_scalar("1 / sqrt(fan_in) * m_N^-0.5 * m_L + fan_out", ScalarScope::matrix);
  CHECK(eval_scalar(rule, rule.root, env) == Approx(1.0 / 16 / 2 * 2 + 1024));
  CHECK_THROWS_WITH(parse_scalar("1 / sqrt(fan_in)"),
                    Catch::Contains("column 10: fan_in is a matrix's; only a parametrization rule"));
  CHECK_THROWS_WITH(parse_block("x + F(x) * fan_out"), Catch::Contains("column 12: fan_out is a matrix's"));
}

TEST_CASE("a stream interpreter is driven in written order, conditions decided first") {
  const Block mix = parse_block("b < 2 ? N(x + F(x)) : x + F(N(x))");
  Trace t;
  CHECK(eval_stream(mix.sublayers[0], mix.sublayers[0].root, t, env_at(1, 4), "x", "x", "e") ==
        "N((x+F(x)))");
  CHECK(t.log == "F(x);(x+F(x));N((x+F(x)));");
  Trace u;
  CHECK(eval_stream(mix.sublayers[0], mix.sublayers[0].root, u, env_at(2, 4), "x", "x", "e") ==
        "(x+F(N(x)))");
  CHECK(ends_in_norm(mix.sublayers[0], env_at(1, 4)));
  CHECK(!ends_in_norm(mix.sublayers[0], env_at(2, 4)));

  const Block ln = parse_block("x + F(N(x) / 4) - alpha * x0; N(x0)+F(x)");
  Trace v;
  eval_stream(ln.sublayers[0], ln.sublayers[0].root, v, env_at(0, 4), "x", "y", "e");
  CHECK(v.log ==
        "N(x);0.25*N(x);F(0.25*N(x));(x+F(0.25*N(x)));0.50*y;-1.0*0.50*y;((x+F(0.25*N(x)))+-1.0*0.50*y);");
}

// emb (the stack's input x_0: the embedding skip of modded-nanogpt and nanochat) is a stream of its own,
// read by any expression, pair or not, and written back as written.
TEST_CASE("emb reads the stack's input") {
  const Block skip = parse_block("1.1 * x + 0.2 * emb + F(N(1.1 * x + 0.2 * emb))");
  CHECK(reads_embedding(skip));
  CHECK(!reads_embedding(parse_block("x + F(N(x)); x0 + F(x)")));
  CHECK(to_text(skip) == "1.1 * x + 0.2 * emb + F(N(1.1 * x + 0.2 * emb))");
  Trace t;
  CHECK(eval_stream(skip.sublayers[0], skip.sublayers[0].root, t, env_at(0, 4), "x", "x", "e") ==
        "((1.10*x+0.20*e)+F(N((1.10*x+0.20*e))))");
  CHECK(t.log ==
        "1.10*x;0.20*e;(1.10*x+0.20*e);N((1.10*x+0.20*e));F(N((1.10*x+0.20*e)));"
        "((1.10*x+0.20*e)+F(N((1.10*x+0.20*e))));");  // the shared input is computed once
}

TEST_CASE("a subexpression written twice is one value, computed once") {
  const Block h = parse_block("N(x) + F(N(x))");
  Trace t;
  CHECK(eval_stream(h.sublayers[0], h.sublayers[0].root, t, env_at(0, 4), "x", "x", "e") == "(N(x)+F(N(x)))");
  CHECK(t.log == "N(x);F(N(x));(N(x)+F(N(x)));");
  CHECK(to_text(h) == "N(x) + F(N(x))");
}

TEST_CASE("Fv(u, lam) parses, writes back, and drives branch_value with lam evaluated at the sublayer") {
  for (const char* text : {"x + Fv(N(x), 0.5)", "attention ? x + Fv(N(x), 1 - 1 / (k + 1)) : x + F(N(x))",
                           "N(x + Fv(x, alpha))"}) {
    INFO(text);
    const Block b = parse_block(text);
    CHECK(to_text(b) == text);
    CHECK(reads_first_values(b));
  }
  CHECK_FALSE(reads_first_values(parse_block("x + F(N(x))")));
  Trace t;
  const Expr e = parse_block("x + Fv(N(x), alpha * (k + 1))").sublayers.front();
  eval_stream(e, e.root, t, env_at(1, 4), std::string("x"), std::string("x"), std::string("emb"));
  CHECK(t.branches == 1);
  CHECK(t.log == "N(x);Fv(N(x),1.00);(x+Fv(N(x),1.00));");
  CHECK_THROWS_WITH(parse_block("x + Fv(N(x))"), Catch::Contains("expected ','"));
  CHECK_THROWS_WITH(parse_block("x + Fv(1, 0.5)"), Catch::Contains("takes a stream u"));
  CHECK_THROWS_WITH(parse_block("x + Fv(x, x)"), Catch::Contains("takes a number lam"));
  CHECK_THROWS_WITH(parse_block("x + Fv(x, 0.5) + F(x)"), Catch::Contains("exactly once"));
  CHECK_THROWS_WITH(parse_scalar("Fv(x, 1)"), Catch::Contains("stream"));
}
