// Regular expressions → DFA (automata/regex.hpp), checked against an independent
// implementation: std::regex_match (ECMAScript grammar) on every word up to a length, for hand
// written and for random expressions; and the one-line, column-numbered errors.
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

#include "automata/dfa.hpp"
#include "automata/regex.hpp"
#include "core/error.hpp"

namespace {

using namespace ropesim::automata;

/// Every word over `letters` of length ≤ `max_length`, shortest first.
std::vector<std::string> all_words(const std::string& letters, std::size_t max_length) {
  std::vector<std::string> out{""};
  for (std::size_t begin = 0, length = 1; length <= max_length; ++length) {
    const std::size_t end = out.size();
    for (std::size_t i = begin; i < end; ++i) {
      for (char c : letters) out.push_back(out[i] + c);
    }
    begin = end;
  }
  return out;
}

/// The first word up to `max_length` on which the DFA of `regex` and std::regex_match disagree,
/// or "" with `agree` true.
bool agrees_with_std_regex(const std::string& regex, const std::string& letters,
                           std::size_t max_length, std::string& differing) {
  const Dfa d = regex_to_dfa(regex, alphabet_from_letters(letters));
  // libstdc++'s default executor backtracks (exponential on nested stars such as ((a|)+)*);
  // its __polynomial flag selects its breadth-first (Thompson) executor, still libstdc++'s own
  // parser and automaton, independent of automata/regex.cpp.
  const std::regex reference(regex, std::regex::ECMAScript | std::regex_constants::__polynomial);
  for (const auto& w : all_words(letters, max_length)) {
    if (d.accepts(d.word(w)) != std::regex_match(w, reference)) {
      differing = w;
      return false;
    }
  }
  return true;
}

std::string error_of(const std::string& regex, const std::string& letters) {
  try {
    regex_to_dfa(regex, alphabet_from_letters(letters));
  } catch (const ropesim::InvalidArgument& e) {
    return e.what();
  }
  return "";
}

/// A random regular expression over `letters` in the syntax both grammars share: every
/// repetition applies to a parenthesised group (ECMAScript refuses `a**`).
std::string draw_regex(const std::string& letters, int depth) {
  const int choice = *rc::gen::inRange(0, depth <= 0 ? 3 : 10);
  switch (choice) {
    case 0:
    case 1:
      return std::string(1, letters[*rc::gen::inRange<std::size_t>(0, letters.size())]);
    case 2:
      return *rc::gen::element(std::string("."), std::string("()"));
    case 3:
    case 4:
      return draw_regex(letters, depth - 1) + draw_regex(letters, depth - 1);
    case 5:
    case 6:
      return draw_regex(letters, depth - 1) + "|" +
             (*rc::gen::inRange(0, 6) == 0 ? "" : draw_regex(letters, depth - 1));
    default:
      return "(" + draw_regex(letters, depth - 1) + ")" +
             *rc::gen::element(std::string("*"), std::string("+"), std::string("?"));
  }
}

}  // namespace

TEST_CASE("regex: the LC25 languages agree with std::regex on all words up to length 8",
          "[automata][regex]") {
  // Over {a,b,c,d} (b0 → b, b1 → c) the words go up to length 6.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"(aa)*", "ab"},
      {"(ab)*", "ab"},
      {"a(a|b)*", "ab"},
      {".*a.*", "ab"},
      {".*a.*b.*", "ab"},
      {"b.*", "ab"},
      {".*b", "ab"},
      {"a*(ba*ba*)*", "ab"},
      {"(a(ab)*b)*", "ab"},
      {".*ab.*", "ab"},
      {".*ab.*", "abc"},
      {"(ab|ba)*", "ab"},
      {"(c|d)*a(a|b|d)*", "abcd"},
      {"(a|c|d)*a(b|d)*", "abcd"},
      {"a+b?|()|b", "ab"},
      {"((a|)b*)+", "ab"},
  };
  for (const auto& [regex, letters] : cases) {
    std::string differing;
    INFO(regex << " over " << letters);
    CHECK(agrees_with_std_regex(regex, letters, letters.size() > 3 ? 6 : 8, differing));
    INFO("first differing word: '" << differing << "'");
  }
}

TEST_CASE("regex: hand-checked memberships", "[automata][regex]") {
  const Dfa parity =
      regex_to_dfa("a*(ba*ba*)*", alphabet_from_letters("ab"));  // even number of b's
  CHECK(parity.accepts(parity.word("")));
  CHECK(parity.accepts(parity.word("abab")));
  CHECK_FALSE(parity.accepts(parity.word("aab")));
  CHECK(parity.accepts(parity.word("bbbb")));
  const Dfa empty = regex_to_dfa("", alphabet_from_letters("ab"));  // ε only
  CHECK(empty.accepts(empty.word("")));
  CHECK_FALSE(empty.accepts(empty.word("a")));
  const Dfa any = regex_to_dfa(".", alphabet_from_letters("abc"));
  CHECK(any.accepts(any.word("c")));
  CHECK_FALSE(any.accepts(any.word("cc")));
}

TEST_CASE("regex: bad input is one line naming the column", "[automata][regex]") {
  CHECK(error_of("a(b", "ab") == "regex: '(' at column 2 is never closed; add ')'");
  CHECK(error_of("ab)", "ab") == "regex: unmatched ')' at column 3 of 'ab)'");
  CHECK(error_of("*a", "ab") ==
        "regex: '*' at column 1 has nothing to repeat; put a letter, '.' or a group before it");
  CHECK(error_of("a|+", "ab").find("'+' at column 3 has nothing to repeat") != std::string::npos);
  CHECK(error_of("ax", "ab").find("'x' at column 2 is not a letter of the alphabet {a, b}") !=
        std::string::npos);
  CHECK(error_of("a b", "ab").find("' ' at column 2 is not a letter") != std::string::npos);
  CHECK(error_of(std::string(2000, '(') + std::string(2000, ')'), "ab")
            .find("nested deeper than 1000") != std::string::npos);
  CHECK_THROWS_AS(alphabet_from_letters(""), ropesim::InvalidArgument);
  CHECK_THROWS_WITH(alphabet_from_letters("aba"),
                    "letter 'a' is listed twice in the alphabet; list each once");
  CHECK_THROWS_AS(alphabet_from_letters("a*"), ropesim::InvalidArgument);
  CHECK_THROWS_AS(regex_to_dfa("a", {"ab"}), ropesim::InvalidArgument);
}

TEST_CASE("regex: random expressions agree with std::regex", "[automata][regex][properties]") {
  rc::prop("regex_to_dfa and std::regex_match accept the same words", [] {
    const std::string letters = *rc::gen::element(std::string("ab"), std::string("abc"));
    const std::string regex = draw_regex(letters, 4);
    RC_TAG(letters);
    RC_LOG() << "regex " << regex << " over " << letters << "\n";
    std::string differing;
    const bool agree =
        agrees_with_std_regex(regex, letters, letters.size() == 2 ? 8 : 5, differing);
    RC_LOG() << "first differing word '" << differing << "'\n";
    RC_ASSERT(agree);
  });
}
