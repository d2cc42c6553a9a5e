// proofs::balanced_words: the words `experiment length` tries per length (members and
// non-members of the language, drawn by exact path counts), checked against values derived by
// hand (which side is empty, the exhaustive lists) and against the same language given the
// other way (a formula and a regex of (ab)* must draw the same words: the draw depends only on
// the language, through lexicographic ranks).
#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "proofs/experiments/length_experiment.hpp"

using namespace ropesim;

namespace {

proofs::BalancedWordsSpec spec_of(std::string formula, std::string regex,
                                  std::vector<std::uint64_t> lengths, std::size_t words) {
  proofs::BalancedWordsSpec spec;
  spec.formula = std::move(formula);
  spec.regex = std::move(regex);
  spec.alphabet = {"a", "b"};
  spec.lengths = std::move(lengths);
  spec.words = words;
  spec.seed = 7;
  return spec;
}

}  // namespace

TEST_CASE("balanced_words: MOD_3 has one side per length, by the length mod 3") {
  // mod(3,1) read at N+1 holds iff N ≡ 0 (mod 3): every word of length 3, 6 is a member, none
  // of length 1, 2, 4, 5.
  const auto rows = proofs::balanced_words(spec_of("mod(3,1)", "", {1, 2, 3, 4, 5, 6}, 3));
  REQUIRE(rows.size() == 6);
  for (const auto& row : rows) {
    const bool members = row.length % 3 == 0;
    INFO("length " << row.length);
    CHECK(row.members_empty == !members);
    CHECK(row.nonmembers_empty == members);
    const auto& side = members ? row.members : row.nonmembers;
    // Σ^1 has 2 words (≤ 3: listed once, exhaustive); longer sides have more than 3 (drawn).
    CHECK(side.size() == (row.length == 1 ? 2u : 3u));
    CHECK((members ? row.members_exhaustive : row.nonmembers_exhaustive) == (row.length == 1));
    for (const auto& w : side) CHECK(w.size() == row.length);
  }
  CHECK(rows[0].nonmembers == std::vector<std::string>{"a", "b"});
}

TEST_CASE("balanced_words: PARITY from its regex, exhaustive at length 2") {
  // An even number of b: at length 2 the members are aa, bb and the non-members ab, ba
  // (lexicographic order when a side is listed whole).
  const auto rows = proofs::balanced_words(spec_of("", "a*(ba*ba*)*", {2, 9}, 4));
  CHECK(rows[0].members == std::vector<std::string>{"aa", "bb"});
  CHECK(rows[0].nonmembers == std::vector<std::string>{"ab", "ba"});
  CHECK(rows[0].members_exhaustive);
  CHECK(rows[0].nonmembers_exhaustive);
  for (const auto& w : rows[1].members) CHECK(std::count(w.begin(), w.end(), 'b') % 2 == 0);
  for (const auto& w : rows[1].nonmembers) CHECK(std::count(w.begin(), w.end(), 'b') % 2 == 1);
  CHECK(rows[1].members.size() == 4);
}

TEST_CASE("balanced_words: a formula and a regex of (ab)* draw the same words") {
  const std::vector<std::uint64_t> lengths{1, 2, 7, 8, 30};
  const auto by_formula = proofs::balanced_words(
      spec_of("mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)", "", lengths, 5));
  const auto by_regex = proofs::balanced_words(spec_of("", "(ab)*", lengths, 5));
  REQUIRE(by_formula.size() == by_regex.size());
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    CHECK(by_formula[i].members == by_regex[i].members);
    CHECK(by_formula[i].nonmembers == by_regex[i].nonmembers);
  }
  // (ab)^4 is the only member of length 8; odd lengths have none.
  CHECK(by_regex[3].members == std::vector<std::string>{"abababab"});
  CHECK(by_regex[2].members_empty);
}

TEST_CASE("balanced_words: bad input is refused") {
  CHECK_THROWS_AS(proofs::balanced_words(spec_of("", "", {1}, 1)), InvalidArgument);
  CHECK_THROWS_AS(proofs::balanced_words(spec_of("P a", "a*", {1}, 1)), InvalidArgument);
  CHECK_THROWS_AS(proofs::balanced_words(spec_of("P a", "", {2, 1}, 1)), InvalidArgument);
  CHECK_THROWS_AS(proofs::balanced_words(spec_of("P a", "", {1}, 0)), InvalidArgument);
  CHECK_THROWS_AS(proofs::balanced_words(spec_of("P c", "", {1}, 1)), InvalidArgument);
}
