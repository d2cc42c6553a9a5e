// logic/formula: builders with hash-consing, the parser (precedence, errors with columns) and
// the printer (round trip on random DAGs).
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <catch2/catch.hpp>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "logic/formula.hpp"
#include "tests/logic/random_formula.hpp"

using namespace ropesim::ltl;

namespace {

// A fully parenthesised prefix form of the subformula at `id`, written independently of the
// printer: the oracle for precedence and associativity.
std::string shape(const Formula& f, NodeId id) {
  const Node& n = f.node(id);
  switch (n.op) {
    case Operator::symbol:
      return n.symbol;
    case Operator::top:
      return "T";
    case Operator::modulo:
      return "M" + std::to_string(n.m) + "_" + std::to_string(n.r);
    case Operator::negation:
      return "(! " + shape(f, n.left) + ")";
    case Operator::past:
      return "(P " + shape(f, n.left) + ")";
    case Operator::yesterday:
      return "(Y" + std::to_string(n.k) + " " + shape(f, n.left) + ")";
    case Operator::conjunction:
      return "(& " + shape(f, n.left) + " " + shape(f, n.right) + ")";
    case Operator::disjunction:
      return "(| " + shape(f, n.left) + " " + shape(f, n.right) + ")";
    case Operator::since:
      return "(S " + shape(f, n.left) + " " + shape(f, n.right) + ")";
  }
  return "?";
}

std::string shape_of(std::string_view text) {
  Formula f = parse(text);
  return shape(f, f.root());
}

// Parses `text`, expecting a ParseError at `column` whose message contains `fragment`.
void expect_error(std::string_view text, std::size_t column, const std::string& fragment) {
  INFO("input: '" << text << "'");
  try {
    parse(text);
    FAIL("no ParseError");
  } catch (const ParseError& e) {
    std::string message = e.what();
    INFO("message: " << message);
    CHECK(e.column() == column);
    CHECK(message.rfind("formula: column " + std::to_string(column) + ": ", 0) == 0);
    CHECK(message.find(fragment) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
}

std::size_t reachable_count(const Formula& f) {
  std::vector<bool> live(f.size(), false);
  live[f.root()] = true;
  std::size_t count = 0;
  for (std::size_t id = f.size(); id-- > 0;) {
    if (!live[id]) continue;
    ++count;
    const Node& n = f.node(static_cast<NodeId>(id));
    switch (n.op) {
      case Operator::negation:
      case Operator::past:
      case Operator::yesterday:
        live[n.left] = true;
        break;
      case Operator::conjunction:
      case Operator::disjunction:
      case Operator::since:
        live[n.left] = live[n.right] = true;
        break;
      default:
        break;
    }
  }
  return count;
}

}  // namespace

TEST_CASE("precedence: unary binds tightest, then S, then &, then |", "[logic][parse]") {
  CHECK(shape_of("a | b & c") == "(| a (& b c))");
  CHECK(shape_of("a & b | c") == "(| (& a b) c)");
  CHECK(shape_of("! a S b") == "(S (! a) b)");
  CHECK(shape_of("a S b S c") == "(S (S a b) c)");
  CHECK(shape_of("a S (b S c)") == "(S a (S b c))");
  CHECK(shape_of("P a & b") == "(& (P a) b)");
  CHECK(shape_of("Y^3 Y b") == "(Y3 (Y1 b))");
  CHECK(shape_of("a & b & c") == "(& (& a b) c)");
  CHECK(shape_of("a | b | c") == "(| (| a b) c)");
  CHECK(shape_of("a & b S c") == "(& a (S b c))");
  CHECK(shape_of("a S b & c") == "(& (S a b) c)");
  CHECK(shape_of("a S b | c S d") == "(| (S a b) (S c d))");
  CHECK(shape_of("!P!a") == "(! (P (! a)))");
  CHECK(shape_of("Pa") == "(P a)");
  CHECK(shape_of("P(a & !P true)") == "(P (& a (! (P T))))");
  CHECK(shape_of("  mod( 2 , 1 )&!P(mod(2,1) & !a | mod(2,0) & !b)  ") ==
        "(& M2_1 (! (P (| (& M2_1 (! a)) (& M2_0 (! b))))))");
  CHECK(shape_of("false") == "(! T)");
  CHECK(shape_of("Y^1 a") == shape_of("Y a"));
  CHECK(shape_of("b0 & a_1") == "(& b0 a_1)");
  CHECK(shape_of("Y^18446744073709551615 a") == "(Y18446744073709551615 a)");
  CHECK(shape_of("((a))") == "a");
}

TEST_CASE("parse errors name the column and what was expected", "[logic][parse]") {
  expect_error("", 1, "expected a formula");
  expect_error("   ", 4, "found end of input");
  expect_error("a &", 4, "expected a formula");
  expect_error("(a | b", 7, "expected ')' or an operator");
  expect_error("P(a b)", 5, "expected ')' or an operator ('&', '|', 'S'), found 'b'");
  expect_error("a b", 3,
               "expected an operator ('&', '|', 'S') or the end of the formula, found 'b'");
  expect_error("true false", 6, "found 'false'");
  expect_error("a)", 2, "found ')'");
  expect_error("#", 1, "found '#'");
  expect_error("a & X", 5, "found 'X'");
  expect_error("mod(2,2)", 7, "0 <= r < m = 2");
  expect_error("mod(0,0)", 5, "m >= 1");
  expect_error("mod(3", 6, "expected ','");
  expect_error("mod 2,1", 5, "expected '(' after 'mod'");
  expect_error("mod(3,1", 8, "expected ')' closing mod(m,r)");
  expect_error("Y^0 a", 3, "k >= 1");
  expect_error("Y^ a", 4, "expected a decimal k >= 1");
  expect_error("Y^18446744073709551616 a", 3, "below 2^64");
  expect_error("a S", 4, "expected a formula");
  expect_error("!", 2, "expected a formula");
}

TEST_CASE("builders hash-cons and refuse bad arguments", "[logic][formula]") {
  CHECK(parse("P a & P a").size() == 3);
  CHECK(parse("a & a").size() == 2);
  CHECK(parse("Y^2 a | Y a | Y^2 a").size() == 5);
  Formula f;
  NodeId a = f.symbol("a");
  CHECK(f.symbol("a") == a);
  NodeId pa = f.past(a);
  CHECK(f.past(a) == pa);
  CHECK(f.yesterday(a, 2) != f.yesterday(a, 1));
  CHECK(f.modulo(3, 1) == f.modulo(3, 1));
  CHECK(f.modulo(3, 1) != f.modulo(3, 2));
  CHECK(f.conjunction(a, pa) != f.conjunction(pa, a));
  CHECK_THROWS_AS(f.modulo(0, 0), ropesim::InvalidArgument);
  CHECK_THROWS_AS(f.modulo(2, 2), ropesim::InvalidArgument);
  CHECK_THROWS_AS(f.yesterday(a, 0), ropesim::InvalidArgument);
  CHECK_THROWS_AS(f.symbol("true"), ropesim::InvalidArgument);
  CHECK_THROWS_AS(f.symbol("mod"), ropesim::InvalidArgument);
  CHECK_THROWS_AS(f.symbol("A"), ropesim::InvalidArgument);
  CHECK_THROWS_AS(f.symbol(""), ropesim::InvalidArgument);
  CHECK_THROWS_AS(f.negation(999), ropesim::InvalidArgument);
  CHECK_THROWS_AS(f.set_root(999), ropesim::InvalidArgument);
  Formula empty;
  CHECK_THROWS_AS(empty.root(), ropesim::InvalidArgument);
  Formula g = parse("b & a | c & a");
  CHECK(g.symbols() == std::vector<std::string>{"a", "b", "c"});
  // Children have smaller ids than their parents.
  for (std::size_t id = 0; id < g.size(); ++id) {
    const Node& n = g.node(static_cast<NodeId>(id));
    if (n.op == Operator::conjunction || n.op == Operator::disjunction) {
      CHECK(n.left < id);
      CHECK(n.right < id);
    }
  }
}

TEST_CASE("the printer uses the fewest parentheses", "[logic][print]") {
  CHECK(to_string(parse("(a | (b & c))")) == "a | b & c");
  CHECK(to_string(parse("(a | b) & c")) == "(a | b) & c");
  CHECK(to_string(parse("a S (b S c)")) == "a S (b S c)");
  CHECK(to_string(parse("(a S b) S c")) == "a S b S c");
  CHECK(to_string(parse("(!a) S b")) == "!a S b");
  CHECK(to_string(parse("!(a S b)")) == "!(a S b)");
  CHECK(to_string(parse("P(a & !P true)")) == "P(a & !P true)");
  CHECK(to_string(parse("Y^3 Y b")) == "Y^3 Y b");
  CHECK(to_string(parse("mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)")) ==
        "mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)");
  Formula f = parse("a & b");
  CHECK(to_string(f, f.node(f.root()).left) == "a");
}

TEST_CASE("round trip: parse(to_string(f)) has f's structure", "[logic][print][property]") {
  rc::prop("random DAGs", [] {
    Formula f = testing::random_formula();
    std::string text = to_string(f);
    RC_LOG() << text;
    Formula g = parse(text);
    RC_ASSERT(shape(g, g.root()) == shape(f, f.root()));
    RC_ASSERT(to_string(g) == text);
    RC_ASSERT(g.size() == reachable_count(f));
  });
}

TEST_CASE("tree_size: the formula written as a tree", "[logic][tree_size]") {
  // a & a: the DAG {a, &} is the tree & (a, a) of 3 nodes.
  CHECK(tree_size(parse("a & a")) == 3);
  // P(b & Y^2 a) | P(b & Y^2 a) & c: tree 1 + 5 + (1 + 5 + 1) = 13; DAG 8 nodes (a, b, Y^2 a,
  // b & Y^2 a, P(..), c, P(..) & c, |).
  const Formula g = parse("P(b & Y^2 a) | P(b & Y^2 a) & c");
  CHECK(g.size() == 8);
  CHECK(tree_size(g) == 13);
  // x_0 = a, x_{k+1} = x_k & x_k: the tree has 2^(k+1) − 1 nodes; saturates beyond 2^64.
  Formula f;
  NodeId x = f.symbol("a");
  for (int k = 1; k <= 20; ++k) x = f.conjunction(x, x);
  CHECK(tree_size(f, x) == (std::uint64_t{1} << 21) - 1);
  CHECK(to_string(f, f.node(f.node(x).left).left).size() >=
        tree_size(f, f.node(f.node(x).left).left));
  for (int k = 21; k <= 70; ++k) x = f.conjunction(x, x);
  CHECK(tree_size(f, x) == std::numeric_limits<std::uint64_t>::max());
  CHECK_THROWS_AS(tree_size(f, 1000), ropesim::InvalidArgument);
}
