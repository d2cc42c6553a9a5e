// proofs/languages/po_formula: construction C3, PODFA → LTL[P] formula (THEORY §7 C3; LC25 Lemma
// C.1), and T2 (THEORY §5; LC25 Thm 4.1) on minimal DFAs: partially ordered ⇔ R-trivial transition
// monoid ⇔ the C3 formula defines the DFA's language.
// References: formula_dfa of the C3 formula compared with the DFA by automata::equivalent
// (product BFS), and independently ltl::accepts (logic/evaluate.cpp) against Dfa::accepts on
// every word up to length 8; the R-triviality side is automata::r_triviality (Cayley graph),
// computed without C3; the small formulas are derived by hand from the construction.
#include <rapidcheck/catch.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "automata/classes.hpp"
#include "automata/minimise.hpp"
#include "automata/monoid.hpp"
#include "automata/regex.hpp"
#include "core/error.hpp"
#include "language_support.hpp"
#include "logic/evaluate.hpp"
#include "logic/formula.hpp"
#include "logic/fragment.hpp"
#include "logic/zoo.hpp"
#include "proofs/languages/formula_automaton.hpp"
#include "proofs/languages/po_formula.hpp"
#include "tests/automata/automata_support.hpp"

using namespace ropesim;
using automata::Dfa;
using automata::State;

namespace {

/// Only P, Booleans, atoms and ⊤ occur (LTL[P], THEORY §4).
bool in_ltl_p(const ltl::Formula& f) {
  return std::all_of(f.nodes().begin(), f.nodes().end(), [](const ltl::Node& n) {
    return n.op != ltl::Operator::yesterday && n.op != ltl::Operator::since &&
           n.op != ltl::Operator::modulo;
  });
}

/// A random partially ordered complete DFA with 1..8 states over 2..3 letters: in a hidden
/// order, every transition stays or moves to a later state; the states are then renumbered by a
/// random permutation and the initial state is any state (the earlier ones are unreachable).
Dfa random_po_dfa() {
  const auto n = *rc::gen::inRange<std::size_t>(1, 9);
  const auto letters = *rc::gen::inRange<std::size_t>(2, 4);
  std::vector<std::size_t> name(n);
  std::iota(name.begin(), name.end(), 0);
  for (std::size_t i = n; i > 1; --i)
    std::swap(name[i - 1], name[*rc::gen::inRange<std::size_t>(0, i)]);
  std::vector<std::vector<State>> transitions(n, std::vector<State>(letters));
  for (std::size_t q = 0; q < n; ++q)
    for (std::size_t a = 0; a < letters; ++a)
      transitions[name[q]][a] =
          name[*rc::gen::weightedElement<bool>({{1, true}, {1, false}}) ? q
                                                                        : *rc::gen::inRange(q, n)];
  std::vector<bool> accepting(n);
  for (std::size_t q = 0; q < n; ++q) accepting[q] = *rc::gen::arbitrary<bool>();
  std::vector<std::string> alphabet;
  for (std::size_t a = 0; a < letters; ++a) alphabet.emplace_back(1, static_cast<char>('a' + a));
  return Dfa(alphabet, transitions, name[*rc::gen::inRange<std::size_t>(0, n)], accepting);
}

/// The C3 formula defines L(dfa): by formula_dfa + equivalence, and by ltl::accepts on every
/// word up to length 8.
void check_c3(const Dfa& dfa) {
  const ltl::Formula f = proofs::po_dfa_formula(dfa);
  RC_ASSERT(in_ltl_p(f));
  const auto witness = automata::counterexample(proofs::formula_dfa(f, dfa.alphabet()), dfa);
  if (witness)
    RC_FAIL("C3 formula " + ltl::to_string(f) + " differs from the DFA on '" + dfa.text(*witness) +
            "'");
  const auto bad = language_test::first_disagreement(f, dfa, 8);
  if (bad)
    RC_FAIL("C3 formula " + ltl::to_string(f) + ": ltl::accepts and the DFA disagree on " + *bad);
}

}  // namespace

TEST_CASE("C3: small formulas derived by hand", "[po_formula]") {
  // LT-1 = Σ*aΣ* over {a,b}: minimal DFA 0 (no a; b loops) -a-> 1 (sink, final).
  // ψ_{=0} = ¬P a; ψ_{<1} = P(ψ_{=0} ∧ a); 1 has no leaving letter, so ψ_{=1} = ψ_{<1}.
  const Dfa lt1 = automata::minimise(automata::regex_to_dfa(".*a.*", {"a", "b"}));
  CHECK(ltl::to_string(proofs::po_dfa_formula(lt1)) == "P(!P a & a)");
  // Only the nodes below the root remain: a, P a, !P a, !P a & a, P(..) (b, true and the
  // unused ψ are dropped).
  CHECK(proofs::po_dfa_formula(lt1).size() == 5);
  // aΣ* over {a,b}: 0 -a-> 1 (final sink), 0 -b-> 2 (sink). ψ_{=0} = ¬P a ∧ ¬P b,
  // accept = ψ_{=1} = P(ψ_{=0} ∧ a).
  const Dfa first_a = automata::minimise(automata::regex_to_dfa("a.*", {"a", "b"}));
  CHECK(ltl::to_string(proofs::po_dfa_formula(first_a)) == "P(!P a & !P b & a)");
  // Σ* (one state, final): ψ_{=0} = true; ∅: accept = false (= !true).
  CHECK(ltl::to_string(proofs::po_dfa_formula(Dfa({"a"}, {{0}}, 0, {true}))) == "true");
  CHECK(ltl::to_string(proofs::po_dfa_formula(Dfa({"a"}, {{0}}, 0, {false}))) == "!true");
  // b*a over {a,b} with a sink: 0 -b-> 0, 0 -a-> 1 (final), 1 -a,b-> 2 (sink). ψ_{<1} =
  // P(¬P a ∧ a); ψ_{=1} = ψ_{<1} ∧ ¬P(ψ_{<1} ∧ a) ∧ ¬P(ψ_{<1} ∧ b): exactly one letter after
  // the first a is forbidden, so "ba" is accepted and "baa", "bab" are not.
  const Dfa ba = automata::minimise(automata::regex_to_dfa("b*a", {"a", "b"}));
  const ltl::Formula f = proofs::po_dfa_formula(ba);
  CHECK(ltl::to_string(f) == "P(!P a & a) & !P(P(!P a & a) & a) & !P(P(!P a & a) & b)");
  // DAG: a, P a, !P a, !P a & a, ψ_{<1}, ψ_{<1} & a, P, !P, ∧, b, ψ_{<1} & b, P, !P, ∧.
  CHECK(f.size() == 14);
  CHECK(ltl::accepts(f, ltl::letters("ba")));
  CHECK(ltl::accepts(f, ltl::letters("a")));
  CHECK(!ltl::accepts(f, ltl::letters("baa")));
  CHECK(!ltl::accepts(f, ltl::letters("bab")));
  CHECK(!ltl::accepts(f, ltl::letters("")));
}

TEST_CASE("C3: refuses a DFA that is not partially ordered", "[po_formula]") {
  const Dfa parity({"a", "b"}, {{0, 1}, {1, 0}}, 0, {true, false});
  CHECK_THROWS_WITH(
      proofs::po_dfa_formula(parity),
      Catch::Contains("not partially ordered: states 0 and 1 reach each other ('b' and 'b')"));
}

TEST_CASE("C3: the zoo's LTL[P] languages", "[po_formula]") {
  int checked = 0;
  for (const auto& language : ltl::zoo()) {
    if (language.language_class != "LTL[P]") continue;
    INFO(language.name);
    const Dfa minimal =
        automata::minimise(automata::regex_to_dfa(language.regex, language.alphabet));
    const ltl::Formula f = proofs::po_dfa_formula(minimal);
    CHECK(in_ltl_p(f));
    CHECK(automata::equivalent(proofs::formula_dfa(f, language.alphabet), minimal));
    const std::size_t length =
        language_test::affordable_length(language.alphabet.size(), 8, 200000);
    CHECK(language_test::first_disagreement(f, minimal, length) == std::nullopt);
    ++checked;
  }
  // a.*, .*ab.*, FIRST, LT-1, PT-2, LDP-1, LDP-2.
  CHECK(checked == 7);
}

TEST_CASE("C3: random partially ordered DFAs", "[po_formula]") {
  rc::prop("the C3 formula of a PODFA (minimal or not) defines its language", [] {
    const Dfa dfa = random_po_dfa();
    check_c3(dfa);
    check_c3(automata::minimise(dfa));
  });
}

TEST_CASE("T2 on minimal DFAs: PO iff R-trivial iff C3's formula defines the language",
          "[po_formula][t2]") {
  rc::prop("random complete DFAs, 2-8 states, 2-3 letters, minimised", [] {
    const Dfa drawn = automata_test::draw_dfa(8);
    RC_PRE(drawn.state_count() >= 2);
    const Dfa minimal = automata::minimise(drawn);
    const bool po = automata::partial_order(minimal).partially_ordered;
    const automata::RTriviality r = automata::r_triviality(minimal, 1000000);
    RC_ASSERT(r.r_trivial != automata::Verdict::inconclusive);
    RC_ASSERT((r.r_trivial == automata::Verdict::yes) == po);
    RC_CLASSIFY(po, "partially ordered");
    if (po) {
      check_c3(minimal);
    } else {
      RC_ASSERT_THROWS_AS(proofs::po_dfa_formula(minimal), InvalidArgument);
    }
  });
}

TEST_CASE("T2: every zoo formula's DFA has the zoo's class", "[po_formula][t2]") {
  for (const auto& language : ltl::zoo()) {
    if (language.formula.empty()) continue;
    INFO(language.name);
    const auto c =
        automata::classify(proofs::formula_dfa(ltl::parse(language.formula), language.alphabet));
    CHECK(automata::to_string(c.language_class) == language.language_class);
  }
}
