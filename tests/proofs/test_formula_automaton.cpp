// proofs/languages/formula_automaton: the DFA of a formula (THEORY §4 semantics) against two
// independent references: the logic's evaluator ltl::accepts on every word up to length 8 (random
// formulas with every operator, and the zoo), and the zoo's regular expressions through
// automata::regex_to_dfa (compared by automata::equivalent). Minimal state counts of small
// formulas are derived by hand.
#include <rapidcheck/catch.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "automata/minimise.hpp"
#include "automata/regex.hpp"
#include "core/error.hpp"
#include "language_support.hpp"
#include "logic/evaluate.hpp"
#include "logic/formula.hpp"
#include "logic/zoo.hpp"
#include "proofs/languages/formula_automaton.hpp"
#include "tests/logic/random_formula.hpp"

using namespace ropesim;

namespace {

const std::vector<std::string> ab{"a", "b"};
const std::vector<std::string> abc{"a", "b", "c"};

// A random formula whose root depends on most of its nodes: each new node takes the previous
// one as an operand half of the time, and the temporal operators (P, Y^k, S) and mod are
// frequent, so the automata are larger than random_formula's (whose roots are often shallow).
ltl::Formula deep_formula() {
  ltl::Formula f;
  std::vector<ltl::NodeId> ids{f.symbol("a"), f.symbol("b"), f.symbol("c")};
  const auto operand = [&] {
    return *rc::gen::element(false, true) ? ids.back()
                                          : ids[*rc::gen::inRange<std::size_t>(0, ids.size())];
  };
  const int count = *rc::gen::inRange(1, 25);
  for (int i = 0; i < count; ++i) {
    switch (*rc::gen::inRange(0, 9)) {
      case 0:
        ids.push_back(f.negation(operand()));
        break;
      case 1:
        ids.push_back(f.conjunction(operand(), operand()));
        break;
      case 2:
        ids.push_back(f.disjunction(operand(), operand()));
        break;
      case 3:
      case 4:
        ids.push_back(f.past(operand()));
        break;
      case 5:
        ids.push_back(f.yesterday(operand(), *rc::gen::inRange<std::uint64_t>(1, 4)));
        break;
      case 6:
      case 7:
        ids.push_back(f.since(operand(), operand()));
        break;
      default: {
        const auto m = *rc::gen::inRange<std::uint64_t>(2, 5);
        ids.push_back(
            f.conjunction(operand(), f.modulo(m, *rc::gen::inRange<std::uint64_t>(0, m))));
        break;
      }
    }
  }
  f.set_root(ids.back());
  return f;
}

std::size_t minimal_states(const std::string& text, const std::vector<std::string>& alphabet) {
  return automata::minimise(proofs::formula_dfa(ltl::parse(text), alphabet)).state_count();
}

}  // namespace

TEST_CASE("formula_dfa: minimal sizes derived by hand", "[formula_automaton]") {
  // true: Σ*, one state; false: ∅, one state.
  CHECK(minimal_states("true", ab) == 1);
  CHECK(minimal_states("false", ab) == 1);
  // a at N+1 is false (EOS): the empty language.
  CHECK(minimal_states("a", ab) == 1);
  CHECK(!proofs::formula_dfa(ltl::parse("a"), ab).accepts({}));
  // P a = Σ*aΣ*: states "no a yet", "a seen".
  CHECK(minimal_states("P a", ab) == 2);
  // P(b & P a) = Σ*aΣ*bΣ*: none, a seen, ab seen.
  CHECK(minimal_states("P(b & P a)", ab) == 3);
  // Y^2 a = Σ*aΣ (second-to-last letter a): the last two letters, 4 states.
  CHECK(minimal_states("Y^2 a", ab) == 4);
  // Y^3 true: length ≥ 3: lengths 0, 1, 2, ≥ 3.
  CHECK(minimal_states("Y^3 true", ab) == 4);
  // mod(3,1) at N+1: N ≡ 0 (mod 3): 3 states.
  CHECK(minimal_states("mod(3,1)", ab) == 3);
  // mod(2,0) | mod(3,0) at N + 1: N+1 ≡ 0 mod 2 or mod 3. Over N mod 6 = 0..5 (N+1 = 1..6) the
  // verdicts are 0 1 1 1 0 1, which no rotation by 1..5 preserves: 6 states.
  CHECK(minimal_states("mod(2,0) | mod(3,0)", ab) == 6);
  // !a S b at N+1: some b at j with no a at j+1..N, i.e. w ends with b: Σ*b, 2 states.
  CHECK(minimal_states("!a S b", ab) == 2);
}

TEST_CASE("formula_dfa: hand-checked words", "[formula_automaton]") {
  const auto d = proofs::formula_dfa(ltl::parse("Y^2 a"), ab);
  CHECK(d.accepts(d.word("ab")));
  CHECK(d.accepts(d.word("bbaa")));
  CHECK(!d.accepts(d.word("a")));
  CHECK(!d.accepts(d.word("ba")));
  const auto s = proofs::formula_dfa(ltl::parse("!a S b"), ab);
  CHECK(s.accepts(s.word("b")));
  CHECK(s.accepts(s.word("abb")));
  CHECK(!s.accepts(s.word("ba")));
  CHECK(!s.accepts(s.word("")));
  // mod(2,1) at N+1: N even (THEORY §4: the length test N ≡ r is MOD_m^{r+1} at N+1).
  const auto m = proofs::formula_dfa(ltl::parse("mod(2,1)"), ab);
  CHECK(m.accepts(m.word("")));
  CHECK(!m.accepts(m.word("a")));
  CHECK(m.accepts(m.word("ab")));
}

TEST_CASE("formula_dfa: refusals", "[formula_automaton]") {
  CHECK_THROWS_WITH(proofs::formula_dfa(ltl::parse("P c"), ab),
                    Catch::Contains("atom 'c' is not a letter of the alphabet {a, b}"));
  CHECK_THROWS_AS(proofs::formula_dfa(ltl::parse("Y^12 a"), ab, 1000), InvalidArgument);
  CHECK_THROWS_WITH(proofs::formula_dfa(ltl::parse("mod(5000,1)"), ab, 1000),
                    Catch::Contains("more than 1000 states"));
  CHECK_THROWS_AS(proofs::formula_dfa(ltl::parse("Y^100000000 a"), ab), InvalidArgument);
  // Y^9 a keeps the last 9 letters' "is a" bits: 2^9 = 512 reachable states, all distinct
  // (the 9th letter from the end is a), so a cap of 512 is just enough and 511 is not.
  CHECK(proofs::formula_dfa(ltl::parse("Y^9 a"), ab, 512).state_count() == 512);
  CHECK_THROWS_WITH(proofs::formula_dfa(ltl::parse("Y^9 a"), ab, 511),
                    Catch::Contains("more than 511 states"));
  CHECK(minimal_states("Y^9 a", ab) == 512);
}

TEST_CASE("formula_dfa: the zoo formulas, against their regular expressions and ltl::accepts",
          "[formula_automaton]") {
  for (const auto& language : ltl::zoo()) {
    if (language.formula.empty()) continue;
    INFO(language.name);
    const ltl::Formula f = ltl::parse(language.formula);
    const automata::Dfa d = proofs::formula_dfa(f, language.alphabet);
    const auto witness =
        automata::counterexample(d, automata::regex_to_dfa(language.regex, language.alphabet));
    CHECK(!witness.has_value());
    const std::size_t length =
        language_test::affordable_length(language.alphabet.size(), 8, 200000);
    CHECK(language_test::first_disagreement(f, d, length) == std::nullopt);
  }
}

TEST_CASE("formula_dfa: random formulas agree with ltl::accepts on every word up to length 8",
          "[formula_automaton]") {
  rc::prop("formula_dfa(f) accepts w iff ltl::accepts(f, w)", [] {
    const ltl::Formula f =
        *rc::gen::element(false, true) ? testing::random_formula(14) : deep_formula();
    const automata::Dfa d = proofs::formula_dfa(f, abc);
    RC_CLASSIFY(d.state_count() > 8, "more than 8 states");
    RC_CLASSIFY(d.state_count() > 32, "more than 32 states");
    const auto bad = language_test::first_disagreement(f, d, 8);
    if (bad) RC_FAIL("formula " + ltl::to_string(f) + " and its DFA disagree on " + *bad);
  });
}
