// Extraction (proofs/languages/extraction.hpp): L* with Rivest–Schapire counterexamples against
// exact oracles (random DFAs: the learned DFA must be equivalent to the target and as small as its
// minimisation — checked with automata::equivalent / automata::minimise, which share no code
// with L*), and against compiled transformers of the zoo's LTL[P] and LTL[P,MOD] languages at
// fp16 and fp32 (the learned DFA must be equivalent to regex_to_dfa of the zoo's regex, an
// independent construction, and classify as the zoo says). Also: the prefix oracle equals
// run() on every prefix of compiled models.
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "attention/transformer/prefix_oracle.hpp"
#include "attention/transformer/random_model.hpp"
#include "attention/transformer/run.hpp"
#include "automata/classes.hpp"
#include "automata/minimise.hpp"
#include "automata/regex.hpp"
#include "core/error.hpp"
#include "logic/formula.hpp"
#include "logic/zoo.hpp"
#include "proofs/compiler/compiler.hpp"
#include "proofs/languages/extraction.hpp"

using namespace ropesim;
using numeric::Format;
using ropesim::InvalidArgument;

namespace {

/// A random complete DFA with `states` states over `letters` letters (targets uniform, each
/// state final with probability 1/2).
automata::Dfa random_dfa(std::mt19937_64& rng, std::size_t states, std::size_t letters) {
  std::vector<std::string> alphabet;
  for (std::size_t a = 0; a < letters; ++a)
    alphabet.push_back(std::string(1, static_cast<char>('a' + a)));
  std::vector<std::vector<automata::State>> delta(states, std::vector<automata::State>(letters));
  std::vector<bool> accepting(states);
  for (std::size_t q = 0; q < states; ++q) {
    for (auto& t : delta[q]) t = rng() % states;
    accepting[q] = rng() % 2 == 1;
  }
  return automata::Dfa(alphabet, delta, 0, accepting);
}

/// The exact oracle of a DFA: walks the word once, reading acceptance after every prefix.
proofs::MembershipOracle dfa_oracle(const automata::Dfa& dfa) {
  return [dfa](const automata::Word& w) {
    std::vector<bool> out;
    automata::State q = dfa.initial();
    out.push_back(dfa.accepting(q));
    for (automata::Letter a : w) {
      q = dfa.next(q, a);
      out.push_back(dfa.accepting(q));
    }
    return out;
  };
}

proofs::CompileOptions options_for(const Format& f) {
  proofs::CompileOptions o;
  o.policy.format = f;
  o.certify_limit = 2000;
  o.suggest_format = false;
  return o;
}

}  // namespace

TEST_CASE("L* learns random DFAs exactly from an exact oracle", "[extraction]") {
  // A minimal DFA with n states is distinguished from any other DFA with at most n states by a
  // word of length < 2n (Moore), so exhaustive length 2·8 - 1 = 15 over {a,b} (and 9 over
  // {a,b,c}, for targets of ≤ 5 states) makes the bounded equivalence test exact here.
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t letters = trial % 3 == 0 ? 3 : 2;
    const std::size_t states = 1 + rng() % (letters == 3 ? 5 : 8);
    const automata::Dfa target = random_dfa(rng, states, letters);
    proofs::ExtractionOptions o;
    o.exhaustive_length = letters == 3 ? 9 : 15;
    o.random_words = 20;
    o.random_length = 30;
    const proofs::Extraction e =
        proofs::extract_automaton(dfa_oracle(target), target.alphabet(), o);
    INFO("trial " << trial << ": " << states << " states over " << letters << " letters");
    CHECK_FALSE(e.state_cap_hit);
    CHECK(automata::equivalent(e.dfa, target));
    CHECK(e.dfa.state_count() == automata::minimise(target).state_count());
    CHECK(e.counterexamples + 1 == e.equivalence_rounds);
  }
}

TEST_CASE("L*: the state cap, bad bounds and a lying oracle are reported", "[extraction]") {
  // (ab)*'s minimal DFA has 3 states (ε/even, after a, sink); a cap of 2 stops L*.
  const automata::Dfa target = automata::regex_to_dfa("(ab)*", {"a", "b"});
  proofs::ExtractionOptions o;
  o.max_states = 2;
  const proofs::Extraction e = proofs::extract_automaton(dfa_oracle(target), target.alphabet(), o);
  CHECK(e.state_cap_hit);
  CHECK(e.dfa.state_count() <= 2);
  o.max_states = 256;
  CHECK(proofs::extract_automaton(dfa_oracle(target), target.alphabet(), o).dfa.state_count() == 3);
  o.exhaustive_length = 23;  // 2^23 > kMaxExhaustiveWords = 2^22
  CHECK_THROWS_AS(proofs::extract_automaton(dfa_oracle(target), target.alphabet(), o),
                  InvalidArgument);
  o.exhaustive_length = 4;
  const proofs::MembershipOracle short_answers = [](const automata::Word&) {
    return std::vector<bool>{true};
  };
  CHECK_THROWS_AS(proofs::extract_automaton(short_answers, {"a", "b"}, o), InvalidArgument);
  CHECK_THROWS_AS(proofs::extract_automaton(dfa_oracle(target), {"a", "a"}, o), InvalidArgument);
}

TEST_CASE("find_disagreement: none for the exact DFA, the shortest word otherwise",
          "[extraction]") {
  // (ab)* against (ab)*a?: they first differ on "a"
  // (length 1, the only word of length ≤ 1 in one and not the other).
  const automata::Dfa target = automata::regex_to_dfa("(ab)*", {"a", "b"});
  const automata::Dfa other = automata::regex_to_dfa("(ab)*a?", {"a", "b"});
  proofs::ExtractionOptions o;
  o.exhaustive_length = 6;
  o.random_words = 5;
  o.random_length = 20;
  CHECK_FALSE(proofs::find_disagreement(target, dfa_oracle(target), o).has_value());
  const auto w = proofs::find_disagreement(other, dfa_oracle(target), o);
  REQUIRE(w.has_value());
  CHECK(*w == automata::Word{0});
}

TEST_CASE("L* asks each word at most once and shares prefixes", "[extraction]") {
  // LT-1 = .*a.* has 2 states. Equivalence set: the 2^4 words of length 4 and 3 random words
  // of length 10: 19 equivalence queries of 16·4 + 3·10 = 94 letters (counted by hand).
  const automata::Dfa target = automata::regex_to_dfa(".*a.*", {"a", "b"});
  std::size_t calls = 0;
  const proofs::MembershipOracle counting = [&](const automata::Word& w) {
    ++calls;
    return dfa_oracle(target)(w);
  };
  proofs::ExtractionOptions o;
  o.exhaustive_length = 4;
  o.random_words = 3;
  o.random_length = 10;
  const proofs::Extraction e = proofs::extract_automaton(counting, {"a", "b"}, o);
  CHECK(automata::equivalent(e.dfa, target));
  CHECK(e.equivalence_queries == 19);
  CHECK(e.equivalence_symbols == 94);
  CHECK(e.exhaustive_words == 16);
  CHECK(calls == e.equivalence_queries + e.learning_queries);
}

TEST_CASE("prefix oracle equals run() on every prefix of compiled zoo models",
          "[extraction][prefix_oracle]") {
  std::mt19937_64 rng(9);
  for (const ltl::ZooLanguage& z : ltl::zoo()) {
    if (z.formula.empty() || z.language_class == "none") continue;
    for (const Format& f : {Format::fp16(), Format::fp32()}) {
      const proofs::CompiledModel c =
          proofs::compile(ltl::parse(z.formula), z.alphabet, options_for(f));
      const attention::PrefixOracle oracle(c.model);
      std::string w;
      for (int n = 0; n < 12; ++n) w += z.alphabet[rng() % z.alphabet.size()];
      const attention::PrefixRun r = oracle.run(w);
      for (std::size_t n = 0; n <= w.size(); ++n) {
        INFO(z.name << " at " << f.name << ", prefix " << w.substr(0, n));
        CHECK(r.outputs[n].same_bits(attention::run(c.model, w.substr(0, n)).output));
      }
    }
  }
}

TEST_CASE(
    "extraction recovers the minimal DFA of every zoo language in LTL[P,MOD] from its compiled "
    "transformer",
    "[extraction][zoo][bulk]") {
  std::size_t extracted = 0;
  for (const ltl::ZooLanguage& z : ltl::zoo()) {
    if (z.formula.empty() || z.language_class == "none") continue;
    const automata::Dfa expected = automata::minimise(automata::regex_to_dfa(z.regex, z.alphabet));
    for (const Format& f : {Format::fp16(), Format::fp32()}) {
      const proofs::CompiledModel c =
          proofs::compile(ltl::parse(z.formula), z.alphabet, options_for(f));
      proofs::ExtractionOptions o;
      // A few hundred exhaustive words: length 8 over 2 letters, 5 over 3, 4 over 4, 3 over 6.
      o.exhaustive_length = z.alphabet.size() == 2   ? 8
                            : z.alphabet.size() == 3 ? 5
                            : z.alphabet.size() == 4 ? 4
                                                     : 3;
      o.random_words = 20;
      o.random_length = 40;
      if (c.certified_length) REQUIRE(*c.certified_length >= o.random_length);
      const proofs::Extraction e = proofs::extract_automaton(c.model, o);
      INFO(z.name << " at " << f.name << ": " << e.dfa.state_count() << " states, expected "
                  << expected.state_count());
      CHECK_FALSE(e.state_cap_hit);
      CHECK(automata::equivalent(e.dfa, expected));
      CHECK(e.dfa.state_count() == expected.state_count());
      CHECK(automata::to_string(automata::classify(e.dfa).language_class) == z.language_class);
      ++extracted;
    }
  }
  CHECK(extracted == 18);  // 9 zoo languages with a formula in LTL[P] or LTL[P,MOD], two formats
}

TEST_CASE("survey: classes of DFAs extracted from random RoPE_P and conventional RoPE models",
          "[.survey][extraction]") {
  // Not a correctness test (hidden tag): the figures for docs/PERFORMANCE.md and the report.
  // The same shapes as the extract-rope-p property; RoPE_P (r3 tables, period ≤ 6) against
  // conventional RoPE (base 10^4, r1).
  for (const attention::RandomRotary rotary :
       {attention::RandomRotary::periodic, attention::RandomRotary::conventional}) {
    std::mt19937_64 rng(2026);
    std::map<std::string, int> classes;
    std::map<std::size_t, int> sizes;
    int capped = 0;
    double seconds = 0;
    const int models = 60;
    for (int trial = 0; trial < models; ++trial) {
      attention::RandomModelOptions shape;
      const Format formats[] = {Format::fp16(), Format::bf16(), Format::fp32(), Format::fp8e4m3()};
      shape.format = formats[rng() % 4];
      shape.layers = 1 + rng() % 2;
      shape.heads = 1 + rng() % 2;
      shape.d_model = 2 + rng() % 3;
      shape.head_dim = 2 * (1 + rng() % 2);
      shape.rotary = rotary;
      shape.max_period = 2 + rng() % 5;
      shape.ffn = rng() % 2 == 1;
      const std::uint64_t seed = rng() % 1000000;
      const attention::Model m = attention::random_model(shape, seed);
      proofs::ExtractionOptions o;
      o.exhaustive_length = 8;
      o.random_words = 10;
      o.random_length = 40;
      o.max_states = 64;
      const proofs::Extraction e = proofs::extract_automaton(m, o);
      seconds += e.seconds;
      if (e.state_cap_hit) {
        ++capped;
        continue;
      }
      const automata::Classification c = automata::classify(e.dfa);
      ++classes[std::string(automata::to_string(c.language_class))];
      ++sizes[c.minimal.state_count()];
      if (c.language_class == automata::LanguageClass::none) {
        // The same model under larger bounds: does the extraction still say none?
        proofs::ExtractionOptions big = o;
        big.exhaustive_length = 12;
        big.random_words = 50;
        big.random_length = 100;
        big.max_states = 512;
        const proofs::Extraction e2 = proofs::extract_automaton(m, big);
        WARN("  larger bounds (12, 50 x 100): "
             << (e2.state_cap_hit ? "cap hit, " : "") << e2.dfa.state_count()
             << " states, equivalent to the first: " << automata::equivalent(e2.dfa, e.dfa)
             << ", class " << automata::to_string(automata::classify(e2.dfa).language_class));
        WARN("outside LTL[P,MOD]: trial "
             << trial << ", " << shape.format.name << ", " << shape.layers << " layers, "
             << shape.heads << " heads, d_model " << shape.d_model << ", head_dim "
             << shape.head_dim << ", max period " << shape.max_period << ", ffn " << shape.ffn
             << ", weight seed " << seed << ", " << c.minimal.state_count() << " states; "
             << automata::witness_description(c));
      }
    }
    std::string text;
    for (const auto& [k, n] : classes) text += k + ": " + std::to_string(n) + "  ";
    std::string size_text;
    for (const auto& [k, n] : sizes)
      size_text += std::to_string(k) + "->" + std::to_string(n) + " ";
    WARN((rotary == attention::RandomRotary::periodic ? "RoPE_P" : "conventional")
         << ": " << models << " models, " << capped << " hit the state cap; " << text << "; sizes "
         << size_text << "; " << seconds << " s");
  }
}
