// logic/evaluate: hand-computed truth tables for every operator, and agreement with a second,
// naive evaluator written from the definitions (THEORY §4) on random formulas and words.
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "logic/evaluate.hpp"
#include "logic/formula.hpp"
#include "tests/logic/random_formula.hpp"

using namespace ropesim::ltl;

namespace {

// The truth values of `text` at positions 0..N+1 of `word`, as a string of 0/1.
std::string table(std::string_view text, std::string_view word) {
  Formula f = parse(text);
  Word w = letters(word);
  Evaluation e = evaluate(f, w);
  std::string out;
  for (std::size_t i = 0; i <= w.size() + 1; ++i) out += e.holds(f.root(), i) ? '1' : '0';
  return out;
}

// The semantics read off THEORY §4 directly: recursive on (node, position), quantifying over j.
// Memoised only so that nested P and S stay polynomial; no recurrences or running flags.
class Naive {
 public:
  Naive(const Formula& f, const Word& w) : f_(f), w_(w) {}

  bool holds(NodeId id, std::size_t i) {
    if (i == 0) return false;  // BOS is never a logical position
    auto key = std::make_pair(id, i);
    auto found = memo_.find(key);
    if (found != memo_.end()) return found->second;
    const Node& n = f_.node(id);
    const std::size_t N = w_.size();
    bool value = false;
    switch (n.op) {
      case Operator::symbol:
        value = i <= N && w_[i - 1] == n.symbol;
        break;
      case Operator::top:
        value = true;
        break;
      case Operator::negation:
        value = !holds(n.left, i);
        break;
      case Operator::conjunction:
        value = holds(n.left, i) && holds(n.right, i);
        break;
      case Operator::disjunction:
        value = holds(n.left, i) || holds(n.right, i);
        break;
      case Operator::past:
        for (std::size_t j = 1; j < i; ++j) value = value || holds(n.left, j);
        break;
      case Operator::yesterday:
        value = i > n.k && holds(n.left, i - n.k);
        break;
      case Operator::since:
        for (std::size_t j = 1; j < i; ++j) {
          if (!holds(n.right, j)) continue;
          bool between = true;
          for (std::size_t l = j + 1; l < i; ++l) between = between && holds(n.left, l);
          value = value || between;
        }
        break;
      case Operator::modulo:
        value = i % n.m == n.r;
        break;
    }
    memo_[key] = value;
    return value;
  }

 private:
  const Formula& f_;
  const Word& w_;
  std::map<std::pair<NodeId, std::size_t>, bool> memo_;
};

}  // namespace

TEST_CASE("letters splits a word into single-letter symbols", "[logic][evaluate]") {
  CHECK(letters("abba") == Word{"a", "b", "b", "a"});
  CHECK(letters("").empty());
}

TEST_CASE("truth tables by hand on 'aba' (positions 0..4; 0 = BOS, 4 = EOS)", "[logic][evaluate]") {
  CHECK(table("a", "aba") == "01010");  // symbols are false at BOS and EOS
  CHECK(table("b", "aba") == "00100");
  CHECK(table("c", "aba") == "00000");
  CHECK(table("true", "aba") == "01111");
  CHECK(table("false", "aba") == "00000");
  CHECK(table("!a", "aba") == "00101");  // BOS stays false under negation
  CHECK(table("a & b", "aba") == "00000");
  CHECK(table("a | b", "aba") == "01110");
  CHECK(table("a | !a", "aba") == "01111");
  CHECK(table("P a", "aba") == "00111");
  CHECK(table("P b", "aba") == "00011");
  CHECK(table("P true", "aba") == "00111");
  CHECK(table("!P true", "aba") == "01000");
  CHECK(table("Y a", "aba") == "00101");
  CHECK(table("Y b", "aba") == "00010");
  CHECK(table("Y true", "aba") == "00111");  // false at position 1
  CHECK(table("Y !a", "aba") == "00010");    // Y at 1 does not read BOS
  CHECK(table("Y^2 a", "aba") == "00010");
  CHECK(table("Y^3 a", "aba") == "00001");
  CHECK(table("Y^4 true", "aba") == "00000");
  CHECK(table("Y^3 true", "aba") == "00001");
  CHECK(table("a S b", "aba") == "00011");
  CHECK(table("b S a", "aba") == "00111");
  CHECK(table("true S a", "aba") == "00111");   // false at 1: no j < 1
  CHECK(table("false S a", "aba") == "00101");  // = Y a
  CHECK(table("b S true", "aba") == "00111");
  CHECK(table("mod(2,0)", "aba") == "00101");
  CHECK(table("mod(2,1)", "aba") == "01010");
  CHECK(table("mod(3,1)", "aba") == "01001");
  CHECK(table("mod(1,0)", "aba") == "01111");
  CHECK(table("!mod(2,1)", "aba") == "00101");
}

TEST_CASE("truth tables by hand on other words", "[logic][evaluate]") {
  CHECK(table("a", "") == "00");
  CHECK(table("true", "") == "01");
  CHECK(table("!a", "") == "01");
  CHECK(table("P true", "") == "00");
  CHECK(table("a S true", "") == "00");
  CHECK(table("a S b", "baab") == "001111");
  CHECK(table("a S b", "bcab") == "001001");
  CHECK(table("Y^2 b", "abba") == "000011");
  CHECK(table("P(b & Y a)", "bab") == "00001");  // ab ends at 3, so from 4 on
}

TEST_CASE("accepts reads the root at N + 1", "[logic][evaluate]") {
  Formula f = parse("Y a");
  CHECK(accepts(f, letters("ba")));
  CHECK_FALSE(accepts(f, letters("ab")));
  CHECK_FALSE(accepts(f, letters("")));
  Formula g = parse("mod(2,1)");  // N + 1 odd: even length
  CHECK(accepts(g, letters("")));
  CHECK_FALSE(accepts(g, letters("a")));
  CHECK(accepts(g, letters("ab")));
  Evaluation e = evaluate(f, letters("ab"));
  CHECK(e.length() == 2);
  CHECK_THROWS_AS(e.holds(f.root(), 4), ropesim::InvalidArgument);
  CHECK_THROWS_AS(e.holds(99, 1), ropesim::InvalidArgument);
}

TEST_CASE("the DAG evaluator agrees with the naive one at every node and position",
          "[logic][evaluate][property]") {
  rc::prop("random formulas x random words of length <= 12", [] {
    Formula f = testing::random_formula();
    const auto length = *rc::gen::inRange<std::size_t>(0, 13);
    Word w;
    for (std::size_t i = 0; i < length; ++i) {
      w.emplace_back(1, static_cast<char>('a' + *rc::gen::inRange(0, 4)));  // 'd' is in no formula
    }
    RC_LOG() << to_string(f) << " on " << w.size() << " letters";
    Evaluation e = evaluate(f, w);
    Naive naive(f, w);
    for (NodeId id = 0; id < f.size(); ++id) {
      for (std::size_t i = 0; i <= w.size() + 1; ++i) {
        RC_ASSERT(e.holds(id, i) == naive.holds(id, i));
      }
    }
    RC_ASSERT(accepts(f, w) == naive.holds(f.root(), w.size() + 1));
  });
}
