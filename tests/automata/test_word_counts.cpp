// automata/word_counts: exact path counts and uniform sampling of the words of one length on one
// side of a language (the balanced words of `experiment length`). The expectations come from
// elsewhere: every word up to length 12 (8 over three letters) enumerated and matched by
// std::regex (a second regular-expression engine, not ropesim's DFA); hand-derived counts
// ((ab)*: one member at each even length, none at odd ones); uniformity by a chi-square test
// with a fixed seed and a generous bound; uniform_below against its definition worked by hand
// on mt19937_64 outputs. The formula path (formula_dfa, MOD and Y^k formulas against
// ltl::accepts on every drawn word) runs in tests/cli/test_experiment_length.cpp.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "automata/minimise.hpp"
#include "automata/regex.hpp"
#include "automata/word_counts.hpp"
#include "core/budget.hpp"
#include "core/error.hpp"

using namespace ropesim;
using automata::Side;

namespace {

std::vector<std::string> symbols(const std::string& letters) {
  std::vector<std::string> sigma;
  for (const char c : letters) sigma.emplace_back(1, c);
  return sigma;
}

automata::WordCounts counts_of(const std::string& regex, const std::string& letters,
                               std::uint64_t max_length) {
  return automata::WordCounts(automata::minimise(automata::regex_to_dfa(regex, symbols(letters))),
                              max_length);
}

/// The language of `regex` as std::regex (ECMAScript; the test's regular expressions use only
/// | * ( ) and letters, which mean the same there): "." is Σ, written out as a class of the
/// letters.
std::regex reference(const std::string& regex, const std::string& letters) {
  std::string pattern;
  for (const char c : regex) pattern += c == '.' ? "[" + letters + "]" : std::string(1, c);
  return std::regex(pattern);
}

/// Every word of length n over `letters`, in lexicographic order of letter indices.
std::vector<std::string> all_words(const std::string& letters, std::size_t n) {
  std::vector<std::string> out{""};
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<std::string> next;
    for (const auto& w : out)
      for (const char c : letters) next.push_back(w + c);
    out = std::move(next);
  }
  return out;
}

struct Case {
  std::string regex;
  std::string letters;
  std::size_t max_length;
};

}  // namespace

TEST_CASE("word counts: members and non-members of every length match brute force",
          "[word_counts]") {
  // Modular languages (length ≡ 0 mod 3, (aa)*, (ab)* with empty member sides at odd lengths),
  // star-free ones, two and three letters; Σ* (no non-member at any length).
  const std::vector<Case> cases = {
      {"(ab)*", "ab", 12},         {"(...)*", "ab", 12}, {"(aa)*", "a", 12},
      {"(b|ab*a)*", "ab", 12},     {".*ab.*", "ab", 12}, {".*a..", "ab", 12},
      {"(a|b)*c(a|c)*", "abc", 8}, {".*", "abc", 8},     {"a*|(ab)*b", "ab", 12},
  };
  for (const auto& c : cases) {
    const auto counts = counts_of(c.regex, c.letters, c.max_length);
    const std::regex language = reference(c.regex, c.letters);
    for (std::size_t n = 0; n <= c.max_length; ++n) {
      INFO(c.regex << " over " << c.letters << ", length " << n);
      std::vector<std::string> in, out;
      for (const auto& w : all_words(c.letters, n))
        (std::regex_match(w, language) ? in : out).push_back(w);
      CHECK(counts.words(n, Side::members) == in.size());
      CHECK(counts.words(n, Side::nonmembers) == out.size());
      // Unranking lists exactly the members (non-members) in lexicographic order, and rank
      // inverts it (up to length 8: at most 3^8 words per side).
      if (n > 8) continue;
      for (const auto& [side, expected] :
           {std::pair{Side::members, &in}, std::pair{Side::nonmembers, &out}}) {
        for (std::size_t r = 0; r < expected->size(); ++r) {
          const automata::Word w = counts.unrank(n, side, r);
          REQUIRE(counts.dfa().text(w) == (*expected)[r]);
          CHECK(counts.rank(w, side) == r);
        }
        CHECK_THROWS_AS(counts.unrank(n, side, expected->size()), InvalidArgument);
      }
    }
  }
}

TEST_CASE("word counts: (ab)* has one member at each even length and none at odd ones",
          "[word_counts]") {
  // By hand: (ab)^(n/2) is the only member of length n, for even n; 2^n − 1 non-members.
  const auto counts = counts_of("(ab)*", "ab", 500);
  for (std::uint64_t n : {0, 1, 2, 43, 44, 499, 500}) {
    CHECK(counts.words(n, Side::members) == (n % 2 == 0 ? 1 : 0));
    mpz_class all;
    mpz_ui_pow_ui(all.get_mpz_t(), 2, n);
    const mpz_class expected = all - (n % 2 == 0 ? 1 : 0);
    CHECK(counts.words(n, Side::nonmembers) == expected);
  }
  std::mt19937_64 rng(7);
  CHECK_FALSE(counts.sample(43, Side::members, rng).has_value());
  const auto w = counts.sample(44, Side::members, rng);
  REQUIRE(w.has_value());
  std::string ab22;
  for (int i = 0; i < 22; ++i) ab22 += "ab";
  CHECK(counts.dfa().text(*w) == ab22);
}

TEST_CASE("word counts: samples are uniform (chi-square, fixed seed) and on their side",
          "[word_counts]") {
  // The words over {a, b} containing "ba", at length 7: 120 of them, and 8 without (a^i b^(7−i)).
  const std::string regex = ".*ba.*";
  const auto counts = counts_of(regex, "ab", 7);
  const std::regex language = reference(regex, "ab");
  for (const Side side : {Side::members, Side::nonmembers}) {
    const std::size_t categories = counts.words(7, side).get_ui();
    CHECK(categories == (side == Side::members ? 120u : 8u));
    const std::size_t per_category = 200;
    const std::size_t draws = categories * per_category;
    std::map<std::string, std::size_t> seen;
    std::mt19937_64 rng(2026);
    for (std::size_t i = 0; i < draws; ++i) {
      const std::string w = counts.dfa().text(*counts.sample(7, side, rng));
      REQUIRE(std::regex_match(w, language) == (side == Side::members));
      ++seen[w];
    }
    CHECK(seen.size() == categories);  // every word of the side drawn
    double chi2 = 0;
    for (const auto& [w, k] : seen) {
      const double d = double(k) - double(per_category);
      chi2 += d * d / double(per_category);
    }
    // df = categories − 1; a uniform sampler exceeds df + 6·sqrt(2·df) with probability
    // < 10^-6 (normal approximation); the seed is fixed, so the test is deterministic. A biased
    // sampler (e.g. one letter choice off by one) gives chi2 in the thousands.
    const double df = double(categories) - 1;
    INFO("chi2 " << chi2 << " df " << df);
    CHECK(chi2 < df + 6 * std::sqrt(2 * df));
  }
}

TEST_CASE("word counts: uniform_below takes the 64-bit digits most significant first",
          "[word_counts]") {
  // bound 2^70: b = 70 bits, two outputs o1, o2; the number is (o1 mod 2^6)·2^64 + o2, always
  // below 2^70, so the first draw is kept.
  mpz_class bound;
  mpz_ui_pow_ui(bound.get_mpz_t(), 2, 70);
  std::mt19937_64 rng(5), copy(5);
  const std::uint64_t o1 = copy(), o2 = copy();
  mpz_class expected = mpz_class(static_cast<unsigned long>(o1 & 63));
  expected <<= 64;
  expected += mpz_class(static_cast<unsigned long>(o2));
  CHECK(automata::uniform_below(bound, rng) == expected);
  CHECK(rng() == copy());  // exactly two outputs used
  // bound 1: 0 without using rng; bound 0 refused.
  std::mt19937_64 idle(5);
  CHECK(automata::uniform_below(1, idle) == 0);
  CHECK(idle() == std::mt19937_64(5)());
  CHECK_THROWS_AS(automata::uniform_below(0, idle), InvalidArgument);
}

TEST_CASE("word counts: a table beyond the memory limit is refused before it is built",
          "[word_counts]") {
  const auto dfa = automata::minimise(automata::regex_to_dfa(".*ba.*", symbols("ab")));
  CHECK(automata::word_count_bytes(dfa.state_count(), 2, 1000000) > kMaxWordCountBytes);
  CHECK_THROWS_AS(automata::WordCounts(dfa, 1000000), BudgetExceeded);
  CHECK_NOTHROW(automata::WordCounts(dfa, 2000));
}
