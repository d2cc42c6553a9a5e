// logic/zoo: every formula agrees with std::regex_match of its regular expression (an
// independent implementation) on all short words, plus hand-listed members and non-members;
// fragments and classes are consistent.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "logic/evaluate.hpp"
#include "logic/formula.hpp"
#include "logic/fragment.hpp"
#include "logic/zoo.hpp"

using namespace ropesim::ltl;

namespace {

// The zoo regex in ECMAScript syntax: `.` becomes the class of the alphabet's letters.
std::regex to_std_regex(const ZooLanguage& language) {
  std::string klass = "[";
  for (const std::string& letter : language.alphabet) klass += letter;
  klass += "]";
  std::string out;
  for (char c : language.regex) {
    if (c == '.') {
      out += klass;
    } else {
      out += c;
    }
  }
  return std::regex(out, std::regex::ECMAScript);
}

// Every word over `alphabet` of length 0..max_length.
std::vector<std::string> all_words(const std::vector<std::string>& alphabet,
                                   std::size_t max_length) {
  std::vector<std::string> words{""};
  std::vector<std::string> layer{""};
  for (std::size_t length = 1; length <= max_length; ++length) {
    std::vector<std::string> next;
    for (const std::string& w : layer) {
      for (const std::string& letter : alphabet) next.push_back(w + letter);
    }
    words.insert(words.end(), next.begin(), next.end());
    layer = std::move(next);
  }
  return words;
}

struct Examples {
  std::vector<std::string> members, non_members;
};

const std::map<std::string, Examples>& hand_examples() {
  static const std::map<std::string, Examples> examples = {
      {"(aa)*", {{"", "aa", "aaaa"}, {"a", "aaa", "ab", "ba", "b", "bb"}}},
      {"(ab)*", {{"", "ab", "abab"}, {"a", "ba", "aba", "abb", "aabb"}}},
      {"a.*", {{"a", "ab", "abba"}, {"", "b", "ba"}}},
      {".*a", {{"a", "ba", "bba"}, {"", "b", "ab"}}},
      {".*ab.*", {{"ab", "bab", "aab", "abba"}, {"", "ba", "bba", "aaa", "bbbaaa"}}},
      {".*ab.*/abc", {{"ab", "cab", "acabc"}, {"", "acb", "ba", "cbca"}}},
      {"PARITY", {{"", "a", "bb", "abab", "bab"}, {"b", "ab", "bbb", "abbb"}}},
      {"FIRST", {{"b", "ba", "bab"}, {"", "a", "ab"}}},
      {"LAST", {{"b", "ab", "aab"}, {"", "a", "ba"}}},
      {"LT-1", {{"a", "ba", "bab"}, {"", "b", "bbb"}}},
      {"LT-2", {{"ab", "cab", "cabc"}, {"", "acb", "ba"}}},
      {"PT-2", {{"ab", "acb", "cacbc"}, {"", "ba", "bca", "aaa"}}},
      {"LDP-1",
       {{"a", "da", "ca", "ab", "aa", "aba", "dadbd"}, {"", "d", "ba", "ac", "bda", "aca"}}},
      {"LDP-2",
       {{"ac", "eac", "fafcf", "aacc", "abec"}, {"", "a", "c", "ca", "bac", "adc", "ace"}}},
      {"RDP-1", {{"a", "ca", "aab", "cadbd"}, {"", "d", "ba", "ac", "aba"}}},
      {"DYCK-(1,2)",
       {{"", "ab", "aabb", "abab", "aababb", "aabbab"},
        {"a", "b", "ba", "aab", "abb", "aaabbb", "abba"}}},
  };
  return examples;
}

}  // namespace

TEST_CASE("zoo: every language is well formed", "[logic][zoo]") {
  CHECK(zoo().size() == hand_examples().size());
  for (const ZooLanguage& language : zoo()) {
    INFO(language.name);
    CHECK(&zoo_language(language.name) == &language);
    CHECK_FALSE(language.alphabet.empty());
    for (const std::string& letter : language.alphabet) CHECK(letter.size() == 1);
    CHECK((language.language_class == "LTL[P]" || language.language_class == "LTL[P,MOD]" ||
           language.language_class == "none"));
    CHECK_FALSE(language.note.empty());
    if (language.formula.empty()) CHECK(language.language_class == "none");
    if (!language.formula.empty()) {
      Formula f = parse(language.formula);
      CHECK(to_string(parse(to_string(f))) == to_string(f));
      for (const std::string& symbol : f.symbols()) {
        CHECK(std::find(language.alphabet.begin(), language.alphabet.end(), symbol) !=
              language.alphabet.end());
      }
      Fragment fr = fragment(f);
      if (language.language_class == "LTL[P]") CHECK(fr == Fragment::ltl_p);
      if (language.language_class == "LTL[P,MOD]") CHECK(within(fr, Fragment::ltl_p_mod));
      // A formula of a language outside LTL[P,MOD] cannot itself be in LTL[P,MOD].
      if (language.language_class == "none") CHECK_FALSE(within(fr, Fragment::ltl_p_mod));
    }
  }
}

TEST_CASE("zoo: the expected classes (THEORY §5, §8)", "[logic][zoo]") {
  const std::map<std::string, std::string> expected = {
      {"(aa)*", "LTL[P,MOD]"}, {"(ab)*", "LTL[P,MOD]"}, {"a.*", "LTL[P]"},  {".*a", "none"},
      {".*ab.*", "LTL[P]"},    {".*ab.*/abc", "none"},  {"PARITY", "none"}, {"FIRST", "LTL[P]"},
      {"LAST", "none"},        {"LT-1", "LTL[P]"},      {"LT-2", "none"},   {"PT-2", "LTL[P]"},
      {"LDP-1", "LTL[P]"},     {"LDP-2", "LTL[P]"},     {"RDP-1", "none"},  {"DYCK-(1,2)", "none"},
  };
  for (const auto& [name, klass] : expected) {
    INFO(name);
    CHECK(zoo_language(name).language_class == klass);
  }
  CHECK(zoo_language("PARITY").formula.empty());
  CHECK_FALSE(zoo_language("DYCK-(1,2)").formula.empty());  // star-free: an LTL[S] formula
  CHECK(zoo_language("a.*").formula == "P(a & !P true)");
  CHECK(zoo_language(".*a").formula == "Y a");
  CHECK(zoo_language("LAST").formula == "Y b");
  CHECK(zoo_language(".*ab.*/abc").formula == "P(b & Y a)");
}

TEST_CASE("zoo: unknown names are refused with the list", "[logic][zoo]") {
  try {
    zoo_language("EVEN");
    FAIL("no exception");
  } catch (const ropesim::InvalidArgument& e) {
    std::string message = e.what();
    CHECK(message.find("'EVEN'") != std::string::npos);
    CHECK(message.find("PARITY") != std::string::npos);
    CHECK(message.find("DYCK-(1,2)") != std::string::npos);
  }
}

TEST_CASE("zoo: hand-listed members and non-members", "[logic][zoo]") {
  for (const ZooLanguage& language : zoo()) {
    INFO(language.name);
    const Examples& ex = hand_examples().at(language.name);
    std::regex re = to_std_regex(language);
    for (const std::string& w : ex.members) {
      INFO("member '" << w << "'");
      CHECK(std::regex_match(w, re));
      if (!language.formula.empty()) CHECK(accepts(parse(language.formula), letters(w)));
    }
    for (const std::string& w : ex.non_members) {
      INFO("non-member '" << w << "'");
      CHECK_FALSE(std::regex_match(w, re));
      if (!language.formula.empty()) CHECK_FALSE(accepts(parse(language.formula), letters(w)));
    }
  }
}

TEST_CASE("zoo: each formula agrees with std::regex on all short words", "[logic][zoo]") {
  for (const ZooLanguage& language : zoo()) {
    if (language.formula.empty()) continue;
    INFO(language.name << ": " << language.formula);
    const std::size_t letters_count = language.alphabet.size();
    const std::size_t max_length = letters_count <= 2 ? 8 : (letters_count <= 4 ? 6 : 5);
    Formula f = parse(language.formula);
    std::regex re = to_std_regex(language);
    std::size_t members = 0;
    std::size_t disagreements = 0;
    for (const std::string& w : all_words(language.alphabet, max_length)) {
      bool by_regex = std::regex_match(w, re);
      bool by_formula = accepts(f, letters(w));
      members += by_regex;
      if (by_regex != by_formula) {
        if (++disagreements <= 5) UNSCOPED_INFO("disagree on '" << w << "': regex " << by_regex);
      }
    }
    CHECK(disagreements == 0);
    CHECK(members > 0);
  }
}
