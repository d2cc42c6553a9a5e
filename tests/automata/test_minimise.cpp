// Minimisation (Hopcroft), canonical numbering, equivalence with shortest counterexamples, and
// the DOT/JSON forms. Oracles: minimal state counts derived by hand (comments), Moore's
// algorithm and brute-force word enumeration (tests/automata/automata_support.hpp).
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>

#include "automata/export.hpp"
#include "automata/minimise.hpp"
#include "automata/regex.hpp"
#include "core/error.hpp"
#include "tests/automata/automata_support.hpp"

namespace {

using namespace ropesim::automata;
using namespace automata_test;

Dfa from_regex(const std::string& regex, const std::string& letters) {
  return regex_to_dfa(regex, alphabet_from_letters(letters));
}

/// The first word (length-lexicographic over letter indices, up to `max_length`) on which the
/// two DFAs differ, by enumeration.
std::optional<Word> brute_counterexample(const Dfa& a, const Dfa& b, std::size_t max_length) {
  std::vector<Word> level{Word{}};
  for (std::size_t length = 0; length <= max_length; ++length) {
    std::vector<Word> next;
    for (const auto& w : level) {
      if (a.accepts(w) != b.accepts(w)) return w;
      for (Letter x = 0; x < a.letter_count(); ++x) {
        Word longer = w;
        longer.push_back(x);
        next.push_back(std::move(longer));
      }
    }
    level = std::move(next);
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("minimise: minimal state counts of the zoo, derived by hand", "[automata][minimise]") {
  // (aa)*: even, odd, sink (a b kills). (ab)*: start/accept, after a, sink. aΣ*: start, accept
  // (absorbing), sink. Σ*aΣ*: before/after the first a. PARITY: even/odd number of b's.
  // Σ*a: last letter a or not. DYCK-(1,2) = (a(ab)*b)*: depth 0, 1, 2 and the sink.
  // RDP-1 over {a,b,c,d} (b0 → b, b1 → c): subsets {s0}, {s0,s1}, {s1}, ∅ of the NFA
  // s0 ⟲{a,c,d}, s0 -a-> s1, s1 ⟲{b,d}, all distinguishable ('c a' separates {s0,s1} from {s1}).
  CHECK(minimise(from_regex("(aa)*", "ab")).state_count() == 3);
  CHECK(minimise(from_regex("(ab)*", "ab")).state_count() == 3);
  CHECK(minimise(from_regex("a(a|b)*", "ab")).state_count() == 3);
  CHECK(minimise(from_regex(".*a.*", "ab")).state_count() == 2);
  CHECK(minimise(from_regex("a*(ba*ba*)*", "ab")).state_count() == 2);
  CHECK(minimise(from_regex(".*a", "ab")).state_count() == 2);
  CHECK(minimise(from_regex("(a(ab)*b)*", "ab")).state_count() == 4);
  CHECK(minimise(from_regex("(a|c|d)*a(b|d)*", "abcd")).state_count() == 4);
  CHECK(minimise(from_regex("(aa)*|(aaa)*", "a")).state_count() == 6);  // n mod 6 ∈ {0,2,3,4}
  CHECK(minimise(from_regex("", "ab")).state_count() == 2);             // ε, sink
}

TEST_CASE("minimise: two expressions of one language give the same DFA", "[automata][minimise]") {
  CHECK(minimise(from_regex("(a|b)*", "ab")) == minimise(from_regex("(a*b*)*", "ab")));
  CHECK(minimise(from_regex("a(ba)*", "ab")) == minimise(from_regex("(ab)*a", "ab")));
  CHECK(minimise(from_regex("a*(ba*ba*)*", "ab")) == minimise(from_regex("(a|ba*b)*", "ab")));
  CHECK_FALSE(minimise(from_regex("(aa)*", "ab")) == minimise(from_regex("(aaa)*", "ab")));
  const auto w = counterexample(from_regex("(aa)*", "ab"), from_regex("(aaa)*", "ab"));
  REQUIRE(w.has_value());
  CHECK(*w == Word{0, 0});  // "aa": in (aa)*, not in (aaa)*; shortest (ε and a agree)
  CHECK_THROWS_AS(counterexample(from_regex("a", "ab"), from_regex("a", "ba")),
                  ropesim::InvalidArgument);
}

TEST_CASE("minimise: random DFAs", "[automata][minimise][properties]") {
  rc::prop("Hopcroft's size equals Moore's, the language is kept, minimising twice changes nothing",
           [] {
             const Dfa d = draw_dfa(12);
             const Dfa m = minimise(d);
             RC_ASSERT(m.state_count() == moore_state_count(d));
             RC_ASSERT(!counterexample(d, m).has_value());
             RC_ASSERT(minimise(m) == m);
             RC_ASSERT(m.initial() == 0u);
           });
  rc::prop("counterexample is the first differing word by enumeration", [] {
    const Dfa a = draw_dfa(3), b0 = draw_dfa(3);
    // Same alphabet: rebuild b over a's alphabet size by truncating or padding letters.
    std::vector<std::vector<State>> rows = b0.transitions();
    for (auto& row : rows) row.resize(a.letter_count(), row[0]);
    const Dfa b(a.alphabet(), rows, b0.initial(), b0.accepting_states());
    // Two DFAs of ≤ 3 states that differ do so on a word shorter than 3 · 3.
    RC_ASSERT(counterexample(a, b) == brute_counterexample(a, b, 9));
  });
}

TEST_CASE("export: JSON round trip and refusals, DOT", "[automata][export]") {
  const Dfa d = minimise(from_regex("(aa)*", "ab"));
  CHECK(dfa_from_json(to_json(d)) == d);
  // Hand-written: 0 = even (initial, final), 1 = odd, 2 = sink.
  CHECK(to_json(d) ==
        nlohmann::json::parse(R"({"alphabet":["a","b"],"states":3,"initial":0,"accepting":[0],
                                                 "transitions":[[1,2],[0,2],[2,2]]})"));
  CHECK(to_dot(d) ==
        "digraph DFA {\n  rankdir=LR;\n  start [shape=point];\n  0 [shape=doublecircle];\n  1 "
        "[shape=circle];\n"
        "  2 [shape=circle];\n  start -> 0;\n  0 -> 1 [label=\"a\"];\n  0 -> 2 [label=\"b\"];\n"
        "  1 -> 0 [label=\"a\"];\n  1 -> 2 [label=\"b\"];\n  2 -> 2 [label=\"a,b\"];\n}\n");
  auto refused = [](const std::string& text) {
    try {
      dfa_from_json(nlohmann::json::parse(text));
    } catch (const ropesim::InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(
      refused(
          R"({"alphabet":["a"],"states":2,"initial":0,"accepting":[],"transitions":[[0],[2]]})") ==
      "DFA JSON: transitions[1][0] is number 2; accepted: a state number 0..1");
  CHECK(
      refused(R"({"alphabet":["a"],"states":1,"initial":0,"accepting":[0,0],"transitions":[[0]]})")
          .find("listed twice") != std::string::npos);
  CHECK(refused(
            R"({"alphabet":["a","a"],"states":1,"initial":0,"accepting":[],"transitions":[[0,0]]})")
            .find("'a' is listed twice") != std::string::npos);
  CHECK(refused(R"({"alphabet":["a"],"states":1,"accepting":[],"transitions":[[0]]})") ==
        "DFA JSON: missing key 'initial'; accepted: a state number");
  CHECK(
      refused(R"({"alphabet":["a","b"],"states":1,"initial":0,"accepting":[],"transitions":[[0]]})")
          .find("accepted: a list of 2 state numbers") != std::string::npos);
  const std::string path = "/tmp/ropesim_test_automata_bad.json";
  std::ofstream(path) << "{not json";
  CHECK_THROWS_WITH(load_dfa(path), Catch::Contains(path + ": malformed JSON at byte "));
  std::remove(path.c_str());
}
