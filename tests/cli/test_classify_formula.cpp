// `ropesim classify --formula` and the C3 formula in classify's report (THEORY §4, §7 C3):
// the language of a formula against the same language given as a regex (regex_to_dfa, an
// independent construction: equal minimal DFAs), the C3 formula of hand-derived examples, its
// round trip (the printed C3 formula, classified again, has the same minimal DFA), the long
// formula summary, and one-line errors with exit code 2.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

namespace {

nlohmann::json classify_json(const std::string& arguments) {
  const Run r = run("classify " + arguments + " --json");
  INFO(arguments << "\n" << r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("classify --formula: the formula's language", "[cli][classify][formula]") {
  struct Case {
    const char* alphabet;
    const char* formula;
    const char* regex;  // the same language, by hand (the last: length ≥ 2 and at most one b)
    const char* language_class;
  };
  for (const Case& c :
       {Case{"ab", "P(b & P a)", ".*a.*b.*", "LTL[P]"}, Case{"ab", "Y a", ".*a", "none"},
        Case{"ab", "mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)", "(ab)*", "LTL[P,MOD]"},
        Case{"abc", "!a S b", ".*b(b|c)*", "none"},
        Case{"ab", "Y^2 true & !P(b & P b)", "aaa*|a+ba*|a*ba+", "LTL[P]"}}) {
    INFO(c.formula);
    const auto f =
        classify_json(std::string("--alphabet ") + c.alphabet + " --formula '" + c.formula + "'");
    const auto r =
        classify_json(std::string("--alphabet ") + c.alphabet + " --regex '" + c.regex + "'");
    CHECK(f["source"]["kind"] == "formula");
    CHECK(f["source"]["text"] == c.formula);
    CHECK(f["class"] == c.language_class);
    CHECK(f["minimal_dfa"] == r["minimal_dfa"]);
  }
}

TEST_CASE("classify: the C3 formula of LTL[P] languages", "[cli][classify][formula]") {
  // LT-1 = Σ*aΣ*: the minimal DFA 0 -a-> 1; C3 gives ψ_{=1} = P(ψ_{=0} ∧ a) with ψ_{=0} = ¬P a:
  // 5 DAG nodes (a, P a, !P a, !P a & a, P(..)).
  const Run text = run("classify --alphabet ab --regex '.*a.*'");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("formula      P(!P a & a)   (C3, 5 DAG nodes)\n") != std::string::npos);
  const auto j = classify_json("--alphabet ab --regex '.*a.*'");
  CHECK(j["formula"]["text"] == "P(!P a & a)");
  CHECK(j["formula"]["dag_nodes"] == 5);
  CHECK(j["formula"]["tree_nodes"] == 6);  // a is used twice in the tree

  // Not LTL[P]: no formula (null in JSON, no line in the text).
  const Run none = run("classify --alphabet ab --formula 'mod(2,1)'");
  REQUIRE(none.code == 0);
  CHECK(none.out.find("\nformula ") == std::string::npos);
  CHECK(classify_json("--alphabet ab --formula 'mod(2,1)'")["formula"].is_null());

  // Round trip: the C3 formula of PT-2 and of LDP-2 (THEORY §8), classified as a formula,
  // has the same minimal DFA.
  for (const auto& [alphabet, regex] :
       {std::pair{"abc", ".*a.*b.*"}, {"abcdef", "(c|d|e|f)*a(a|b|e|f)*c(a|b|c|d|f)*"}}) {
    INFO(regex);
    const auto original =
        classify_json(std::string("--alphabet ") + alphabet + " --regex '" + regex + "'");
    REQUIRE(original["class"] == "LTL[P]");
    const auto again = classify_json(std::string("--alphabet ") + alphabet + " --formula '" +
                                     original["formula"]["text"].get<std::string>() + "'");
    CHECK(again["minimal_dfa"] == original["minimal_dfa"]);
  }
}

TEST_CASE("classify: a C3 formula longer than 2000 characters is summarised in the text",
          "[cli][classify][formula]") {
  // The subword abcabcab (8 letters) over {a,b,c}: 9 states in a chain, C3's tree doubles at
  // each state, so the printed formula is long.
  const std::string arguments =
      "--alphabet abc --formula 'P(b & P(a & P(c & P(b & P(a & P(c & P(b & P a)))))))'";
  const Run text = run("classify " + arguments);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("minimal DFA  9 states") != std::string::npos);
  CHECK(text.out.find(
            "longer than 2000 characters, omitted from the text output (--json prints it)") !=
        std::string::npos);
  const auto j = classify_json(arguments);
  const std::string formula = j["formula"]["text"].get<std::string>();
  CHECK(formula.size() > 2000);
  CHECK(text.out.find(std::to_string(j["formula"]["dag_nodes"].get<int>()) + " DAG nodes") !=
        std::string::npos);
  // The long formula still defines the language (classified again: same minimal DFA).
  const auto again = classify_json("--alphabet abc --formula '" + formula + "'");
  CHECK(again["minimal_dfa"] == j["minimal_dfa"]);
}

TEST_CASE("classify --formula: bad input is one line, exit 2", "[cli][classify][formula]") {
  expect_usage_error(run("classify --alphabet ab --formula 'P(b & P a'"),
                     "--formula: column 10: expected ')'");
  expect_usage_error(run("classify --alphabet ab --formula 'P c'"),
                     "--formula: atom 'c' is not a letter of the alphabet {a, b}");
  expect_usage_error(run("classify --formula 'P a'"), "--formula needs --alphabet");
  expect_usage_error(run("classify --alphabet ab --formula 'P a' --regex a"),
                     "--regex and --formula both given");
  expect_usage_error(run("classify --alphabet ab --formula 'Y^21 a'"),
                     "--formula: formula automaton: more than");
}
