// The deciders of automata/classes.hpp and automata/monoid.hpp (THEORY §5 T2, T6).
// Oracles: the classes the papers give for the zoo (THEORY §8, RoPE-X Prop 3.2, B.2, B.3),
// hand-built DFAs, hand-computed transition monoids, witnesses re-checked by running the DFA
// and by transitive closure, and two properties: the two LTL[P,MOD] deciders agree (also with
// k = lcm(1..n), which needs no period computation), and PO ⇔ R-trivial on minimal DFAs.
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <catch2/catch.hpp>
#include <numeric>

#include "automata/classes.hpp"
#include "automata/minimise.hpp"
#include "automata/monoid.hpp"
#include "automata/regex.hpp"
#include "tests/automata/automata_support.hpp"

namespace {

using namespace ropesim::automata;
using namespace automata_test;

Dfa from_regex(const std::string& regex, const std::string& letters) {
  return regex_to_dfa(regex, alphabet_from_letters(letters));
}

/// Checks a witness of "not partially ordered" (in A_k when k > 1) by running the DFA.
void check_cycle(const Dfa& d, const TwoStateCycle& w, std::size_t k) {
  CHECK(w.p != w.q);
  CHECK(d.run(w.p, w.to) == w.q);
  CHECK(d.run(w.q, w.back) == w.p);
  CHECK(w.to.size() % k == 0);
  CHECK(w.back.size() % k == 0);
}

/// Checks a branching-component witness: both loops return to `state`, start with letters
/// leading to different states, and the component is strongly connected (transitive closure).
void check_branching(const Dfa& d, const BranchingComponent& w) {
  REQUIRE(!w.first_loop.empty());
  REQUIRE(!w.second_loop.empty());
  CHECK(d.run(w.state, w.first_loop) == w.state);
  CHECK(d.run(w.state, w.second_loop) == w.state);
  CHECK(d.next(w.state, w.first_loop[0]) != d.next(w.state, w.second_loop[0]));
  const auto reach = reachability(d);
  for (State p : w.component)
    for (State q : w.component) CHECK((reach[p][q] && reach[q][p]));
  CHECK(std::find(w.component.begin(), w.component.end(), w.state) != w.component.end());
}

struct ZooEntry {
  const char* name;
  const char* regex;
  const char* letters;
  std::size_t states;  ///< minimal DFA size, by hand (test_minimise.cpp explains the less obvious)
  LanguageClass expected;
  std::size_t k;  ///< 1 for LTL[P], the lcm for LTL[P,MOD], 0 for none
};

}  // namespace

TEST_CASE("classify: the zoo as the papers classify it", "[automata][classes]") {
  // THEORY §8 regexes over single letters; LDP-1 and RDP-1 over Σ = {a,b,c,d} with b0 → b,
  // b1 → c. LDP-2 is not spelled out in THEORY; ours is the degree-2 left-deterministic
  // polynomial (Σ∖{a,b})* a (Σ∖{c,d})* c (Σ∖{b})* (a ∉ Σ∖{a,b}, c ∉ Σ∖{c,d}): q0 ⟲{c,d},
  // q1 ⟲{a,b}, q2 ⟲{a,c,d}, and the sink — 4 states.
  using C = LanguageClass;
  const std::vector<ZooEntry> zoo = {
      {"(aa)*", "(aa)*", "ab", 3, C::ltl_p_mod, 2},  // RoPE-X Prop 3.2
      {"(ab)*", "(ab)*", "ab", 3, C::ltl_p_mod, 2},  // RoPE-X Prop 3.2
      {"(aaa)*", "(aaa)*", "a", 3, C::ltl_p_mod, 3},
      {"(aa)*|(aaa)*", "(aa)*|(aaa)*", "a", 6, C::ltl_p_mod, 6},
      {"a(bb)*", "a(bb)*", "ab", 4, C::ltl_p_mod, 2},  // transient, then a 2-cycle
      {"(Σ²)*", "(..)*", "ab", 2, C::ltl_p_mod, 2},    // parallel edges a,b merged
      {"aΣ*", "a(a|b)*", "ab", 3, C::ltl_p, 1},
      {"LT-1", ".*a.*", "ab", 2, C::ltl_p, 1},
      {"PT-2", ".*a.*b.*", "ab", 3, C::ltl_p, 1},
      {"LDP-1", "(c|d)*a(a|b|d)*", "abcd", 3, C::ltl_p, 1},
      {"LDP-2", "(c|d)*a(a|b)*c(a|c|d)*", "abcd", 4, C::ltl_p, 1},
      {"FIRST", "b.*", "ab", 3, C::ltl_p, 1},
      {"LT-2 over 2 letters", ".*ab.*", "ab", 3, C::ltl_p, 1},  // RoPE-X Prop B.2
      {"Σ*a", ".*a", "ab", 2, C::none, 0},
      {"LAST", ".*b", "ab", 2, C::none, 0},
      {"RDP-1", "(a|c|d)*a(b|d)*", "abcd", 4, C::none, 0},
      {"PARITY", "a*(ba*ba*)*", "ab", 2, C::none, 0},  // RoPE-X Prop B.3
      {"DYCK-(1,2)", "(a(ab)*b)*", "ab", 4, C::none, 0},
      {"LT-2 over 3 letters", ".*ab.*", "abc", 3, C::none, 0},  // RoPE-X Prop B.2
      {"(ab|ba)*", "(ab|ba)*", "ab", 4, C::none, 0},            // period 2 but not a simple cycle
  };
  for (const auto& z : zoo) {
    INFO(z.name << " = " << z.regex << " over " << z.letters);
    const Classification c = classify(from_regex(z.regex, z.letters));
    CHECK(c.minimal.state_count() == z.states);
    CHECK(c.language_class == z.expected);
    CHECK(c.k.value_or(0) == z.k);
    CHECK(c.definition_checked);
    CHECK(c.monoid.r_trivial == (z.expected == C::ltl_p ? Verdict::yes : Verdict::no));
    if (z.expected != C::ltl_p) {
      REQUIRE(c.not_ltl_p.has_value());
      check_cycle(c.minimal, *c.not_ltl_p, 1);
    }
    if (z.expected == C::none) {
      REQUIRE(c.not_ltl_p_mod.has_value());
      check_branching(c.minimal, *c.not_ltl_p_mod);
      // The definition method's own witness: two states that reach each other in A_k.
      const DefinitionTest definition = decide_ltl_p_mod_by_definition(c.minimal);
      REQUIRE(definition.witness.has_value());
      check_cycle(c.minimal, *definition.witness, definition.k);
    }
    const auto json = to_json(c);
    CHECK(json["class"] == std::string(to_string(z.expected)));
    CHECK(json["formula"].is_null());
    CHECK(json["witness"].is_null() == (z.expected == C::ltl_p));
  }
}

TEST_CASE("classify: (ab|ba)* in detail", "[automata][classes]") {
  // Minimal DFA (canonical BFS numbering): 0 -a-> 1, 0 -b-> 2, 1 -b-> 0, 2 -a-> 0, else sink 3.
  // Every cycle has length 2 (period 2), but 0 has two successors in the component {0,1,2},
  // and in A_2: 1 -b-> 0 -b-> 2 and 2 -a-> 0 -a-> 1, two distinct states reaching each other.
  const Dfa m = minimise(from_regex("(ab|ba)*", "ab"));
  const auto components = strongly_connected_components(m);
  REQUIRE(components.size() == 2);
  CHECK(components[0].states == std::vector<State>{0, 1, 2});
  CHECK(components[0].period == 2);
  CHECK(components[1].states == std::vector<State>{3});
  CHECK(components[1].period == 1);  // the sink's self-loops
  const ComponentTest t = decide_ltl_p_mod_by_components(m);
  REQUIRE(t.witness.has_value());
  CHECK(t.witness->state == 0);
  CHECK(m.text(t.witness->first_loop) == "ab");
  CHECK(m.text(t.witness->second_loop) == "ba");
  const DefinitionTest d = decide_ltl_p_mod_by_definition(m);
  CHECK(d.k == 2);
  REQUIRE(d.witness.has_value());
  CHECK(d.witness->p == 1);
  CHECK(d.witness->q == 2);
  CHECK(m.text(d.witness->to) == "bb");
  CHECK(m.text(d.witness->back) == "aa");
}

TEST_CASE("transition monoid: sizes and R-triviality by hand", "[automata][monoid]") {
  // (aa)* over {a,b}: states even 0, odd 1, sink 2; a = (1 0 2), b = (2 2 2), aa = 1, ab = ba
  // = b: M = {1, a, b}; 1·a = a and a·a = 1, so 1 R a: not R-trivial.
  RTriviality r = r_triviality(minimise(from_regex("(aa)*", "ab")), 100);
  CHECK(r.r_trivial == Verdict::no);
  CHECK(r.size == 3);
  // Σ*aΣ*: a = (1 1), b = identity: M = {1, a}, R-trivial.
  r = r_triviality(minimise(from_regex(".*a.*", "ab")), 100);
  CHECK(r.r_trivial == Verdict::yes);
  CHECK(r.size == 2);
  // Σ*a: a = (1 1), b = (0 0), a·b = b, b·a = a: M = {1, a, b}, a R b.
  r = r_triviality(minimise(from_regex(".*a", "ab")), 100);
  CHECK(r.r_trivial == Verdict::no);
  CHECK(r.size == 3);
  REQUIRE(r.witness.has_value());
  const auto& w = *r.witness;  // {w_s, w_t, x, y}: s·x = t, t·y = s
  const Dfa m = minimise(from_regex(".*a", "ab"));
  for (State q = 0; q < m.state_count(); ++q) {
    Word sx = w[0], ty = w[1];
    sx.insert(sx.end(), w[2].begin(), w[2].end());
    ty.insert(ty.end(), w[3].begin(), w[3].end());
    CHECK(m.run(q, sx) == m.run(q, w[1]));
    CHECK(m.run(q, ty) == m.run(q, w[0]));
  }
  // The cap: (aa)*|(aaa)* has the cyclic group of order 6 as monoid; a cap of 5 is inconclusive.
  CHECK(r_triviality(minimise(from_regex("(aa)*|(aaa)*", "a")), 6).r_trivial == Verdict::no);
  const RTriviality capped = r_triviality(minimise(from_regex("(aa)*|(aaa)*", "a")), 5);
  CHECK(capped.r_trivial == Verdict::inconclusive);
  CHECK(capped.size == 0);
}

TEST_CASE("stable semigroup: stability index, size and QR by hand", "[automata][monoid]") {
  // (aa)* over {a,b}: a = (1 0 2), b = (2 2 2), M = {1, a, b}. E_1 = {a, b}, E_2 = {1, b},
  // E_3 = {a, b} = E_1: preperiod 1, period 2, so s = 2 and S = {1, b}; bS = {b} ∌ 1: QR.
  QuasiRTriviality q = quasi_r_triviality(minimise(from_regex("(aa)*", "ab")), 100);
  CHECK(q.quasi_r_trivial == Verdict::yes);
  CHECK(q.stability_index == 2);
  CHECK(q.size == 2);
  // (aa)*|(aaa)* over {a}: M = Z_6 generated by a; E_n = {a^n}, period 6, s = 6, S = {1}: QR.
  q = quasi_r_triviality(minimise(from_regex("(aa)*|(aaa)*", "a")), 100);
  CHECK(q.quasi_r_trivial == Verdict::yes);
  CHECK(q.stability_index == 6);
  CHECK(q.size == 1);
  // PARITY (even number of b's): a = 1, b = swap; E_1 = {1, b} = E_2: s = 1, S = Z_2, and
  // 1·b = b, b·b = 1: not QR (Prop B.3).
  const Dfa parity = minimise(from_regex("a*(ba*ba*)*", "ab"));
  q = quasi_r_triviality(parity, 100);
  CHECK(q.quasi_r_trivial == Verdict::no);
  CHECK(q.stability_index == 1);
  CHECK(q.size == 2);
  REQUIRE(q.witness.has_value());
  const auto& w = *q.witness;  // {u_s, u_t, x, y}: s·x = t, t·y = s, each of length s
  for (State state = 0; state < parity.state_count(); ++state) {
    Word sx = w[0], ty = w[1];
    sx.insert(sx.end(), w[2].begin(), w[2].end());
    ty.insert(ty.end(), w[3].begin(), w[3].end());
    CHECK(parity.run(state, sx) == parity.run(state, w[1]));
    CHECK(parity.run(state, ty) == parity.run(state, w[0]));
    CHECK(parity.run(state, w[0]) != parity.run(state, w[1]));
  }
  // Σ*a: M = {1, a, b} with a·b = b, b·a = a; E_1 = {a, b} = E_2, s = 1: a R b, not QR
  // (Σ*a = Y π_a needs Y, it is not in LTL[P,MOD]).
  q = quasi_r_triviality(minimise(from_regex(".*a", "ab")), 100);
  CHECK(q.quasi_r_trivial == Verdict::no);
  CHECK(q.stability_index == 1);
  // (ab)* over {a,b}: 0 -a-> 1 -b-> 0, everything else to the sink 2. η(ab) = (0 2 2),
  // η(ba) = (2 1 2), η(aa) = η(bb) = sink = z; E_2 = {ab, ba, z} = E_4, s = 2; ab·ba = z and
  // z·x = z, so no two distinct elements of S are R-related: QR (Prop 3.2).
  q = quasi_r_triviality(minimise(from_regex("(ab)*", "ab")), 100);
  CHECK(q.quasi_r_trivial == Verdict::yes);
  CHECK(q.stability_index == 2);
  CHECK(q.size == 3);
  // The cap: (aa)*|(aaa)* has 6 monoid elements; a cap of 5 is inconclusive.
  CHECK(quasi_r_triviality(minimise(from_regex("(aa)*|(aaa)*", "a")), 5).quasi_r_trivial ==
        Verdict::inconclusive);
}

TEST_CASE("deciders on random minimal DFAs", "[automata][classes][properties]") {
  rc::prop(
      "property 1: the component test and the A_k definition agree (and with k = lcm(1..n))", [] {
        const Dfa m = minimise(draw_dfa(12));
        const ComponentTest components = decide_ltl_p_mod_by_components(m);
        const DefinitionTest definition = decide_ltl_p_mod_by_definition(m);
        RC_TAG(components.ltl_p_mod ? (partial_order(m).partially_ordered ? "LTL[P]" : "LTL[P,MOD]")
                                    : "none");
        RC_LOG() << "minimal states " << m.state_count() << ", component test "
                 << components.ltl_p_mod << " (k " << components.k << "), definition "
                 << definition.ltl_p_mod << " (k " << definition.k << ")\n";
        RC_ASSERT(components.ltl_p_mod == definition.ltl_p_mod);
        if (components.ltl_p_mod)
          RC_ASSERT(components.k == definition.k);  // simple cycle: length = period
        std::size_t all = 1;  // lcm(1..n): a multiple of every possible period, no periods needed
        for (std::size_t i = 2; i <= m.state_count(); ++i) all = std::lcm(all, i);
        RC_ASSERT(k_automaton_partial_order(m, all).partially_ordered == components.ltl_p_mod);
        if (components.witness) {
          const auto& w = *components.witness;
          RC_ASSERT(m.run(w.state, w.first_loop) == w.state);
          RC_ASSERT(m.run(w.state, w.second_loop) == w.state);
        }
      });
  rc::prop(
      "property 2: partially ordered ⇔ R-trivial transition monoid (when not inconclusive)", [] {
        const Dfa m = minimise(draw_dfa(8));
        const PartialOrder po = partial_order(m);
        const RTriviality r = r_triviality(m, 5000);
        RC_TAG(r.r_trivial == Verdict::inconclusive ? "inconclusive"
                                                    : (po.partially_ordered ? "PO" : "not PO"));
        if (r.r_trivial == Verdict::inconclusive) return;
        RC_LOG() << "minimal states " << m.state_count() << ", monoid " << r.size << ", PO "
                 << po.partially_ordered << "\n";
        RC_ASSERT((r.r_trivial == Verdict::yes) == po.partially_ordered);
      });
  rc::prop("partial_order agrees with transitive closure and its witness is a cycle", [] {
    const Dfa d = draw_dfa(12);
    const auto reach = reachability(d);
    bool po = true;
    for (std::size_t p = 0; p < d.state_count(); ++p)
      for (std::size_t q = 0; q < d.state_count(); ++q)
        po = po && (p == q || !(reach[p][q] && reach[q][p]));
    const PartialOrder got = partial_order(d);
    RC_ASSERT(got.partially_ordered == po);
    if (got.witness) {
      RC_ASSERT(got.witness->p != got.witness->q);
      RC_ASSERT(d.run(got.witness->p, got.witness->to) == got.witness->q);
      RC_ASSERT(d.run(got.witness->q, got.witness->back) == got.witness->p);
    }
  });
}
