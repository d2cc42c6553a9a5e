// `ropesim classify` as a user meets it: the class, minimal DFA size, k and witness of zoo
// languages (THEORY §5 T2/T6, §8; RoPE-X Prop 3.2, B.2), the --dfa, --dot and --out files,
// and one-line errors with exit code 2.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

TEST_CASE("classify --json: zoo languages", "[cli][classify]") {
  struct Case {
    const char* arguments;
    int states;
    const char* language_class;
    int k;  // 0: null
  };
  // Sizes by hand: (aa)*: even, odd, sink; Σ*abΣ*: no a yet, just read a, found.
  for (const Case& c : {Case{"--alphabet ab --regex '(aa)*'", 3, "LTL[P,MOD]", 2},
                        Case{"--alphabet ab --regex '.*ab.*'", 3, "LTL[P]", 1},
                        Case{"--alphabet abc --regex '.*ab.*'", 3, "none", 0},
                        Case{"--alphabet ab --regex 'a*(ba*ba*)*'", 2, "none", 0}}) {
    const Run r = run(std::string("classify ") + c.arguments + " --json");
    INFO(c.arguments << "\n" << r.err);
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["states"] == c.states);
    CHECK(j["class"] == c.language_class);
    if (c.k == 0) {
      CHECK(j["k"].is_null());
    } else {
      CHECK(j["k"] == c.k);
    }
    CHECK(j["formula"].is_null() == (std::string(c.language_class) != "LTL[P]"));  // C3 for LTL[P]
    CHECK(j["witness"].is_null() == (std::string(c.language_class) == "LTL[P]"));
  }
}

TEST_CASE("classify: text, --dfa, --dot and --out", "[cli][classify]") {
  const Run text = run("classify --alphabet ab --regex '(ab|ba)*'");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("source       regex '(ab|ba)*' over {a, b}") != std::string::npos);
  CHECK(text.out.find("minimal DFA  4 states") != std::string::npos);
  CHECK(text.out.find("class        none") != std::string::npos);
  CHECK(text.out.find("the loops 'ab' and 'ba'") != std::string::npos);

  // Σ*a as a hand-written DFA file: 0 = last letter not a, 1 = last letter a.
  const std::string dfa = temp_path("classify_dfa.json"), dot = temp_path("classify.dot"),
                    out = temp_path("classify_out.json");
  std::ofstream(dfa) << R"({"alphabet": ["a", "b"], "states": 2, "initial": 0, "accepting": [1],
                          "transitions": [[1, 0], [1, 0]]})";
  const Run r = run("classify --dfa " + dfa + " --json --dot " + dot + " --out " + out);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["class"] == "none");
  CHECK(j["states"] == 2);
  CHECK(j["witness"]["kind"] == "branching component");
  std::stringstream dot_text, out_text;
  dot_text << std::ifstream(dot).rdbuf();
  out_text << std::ifstream(out).rdbuf();
  CHECK(dot_text.str().find("1 [shape=doublecircle];") != std::string::npos);
  const auto saved = nlohmann::json::parse(out_text.str());
  CHECK(saved["class"] == "none");
  CHECK(saved["provenance"]["tool"] == "ropesim");
  for (const auto& path : {dfa, dot, out}) std::filesystem::remove(path);
}

TEST_CASE("classify: bad input is one line, exit 2", "[cli][classify]") {
  expect_usage_error(run("classify --alphabet ab --regex 'a(b'"),
                     "--regex: '(' at column 2 is never closed");
  expect_usage_error(run("classify --alphabet ab --regex 'ab)'"), "unmatched ')' at column 3");
  expect_usage_error(run("classify --alphabet ab --regex 'ax'"), "'x' at column 2 is not a letter");
  expect_usage_error(run("classify --alphabet aa --regex 'a'"),
                     "--alphabet: letter 'a' is listed twice");
  expect_usage_error(run("classify --regex 'a'"), "--regex needs --alphabet");
  expect_usage_error(run("classify --alphabet ab"), "no language given");
  expect_usage_error(run("classify --alphabet ab --regex a --dfa x.json"),
                     "--regex and --dfa both given");
  expect_usage_error(
      run("classify --dfa /nonexistent/dfa.json"),
      "/nonexistent/dfa.json: cannot open the DFA file (JSON) (No such file or directory)");
  const std::string ab = temp_path("classify_ab.json");
  std::ofstream(ab)
      << R"({"alphabet": ["a", "b"], "states": 1, "initial": 0, "accepting": [], "transitions": [[0, 0]]})";
  expect_usage_error(run("classify --dfa " + ab + " --alphabet ba"),
                     "--alphabet {b, a} differs from the alphabet {a, b}");
  std::filesystem::remove(ab);
  const std::string bad = temp_path("classify_bad.json");
  std::ofstream(bad)
      << R"({"alphabet": ["a"], "states": 1, "initial": 3, "accepting": [], "transitions": [[0]]})";
  expect_usage_error(run("classify --dfa " + bad),
                     "'initial' is number 3; accepted: a state number 0..0");
  std::filesystem::remove(bad);
  const std::string out = temp_path("classify_never.json");
  const Run r = run("classify --alphabet ab --regex '(' --out " + out);
  expect_usage_error(r, "never closed");
  CHECK_FALSE(std::filesystem::exists(out));
}

TEST_CASE("classify --model: the DFA extracted from a compiled transformer",
          "[cli][classify][extraction]") {
  // (ab)* compiled at fp16 (RoPE-X Prop 3.2): minimal DFA ε/even, after a, sink = 3 states,
  // LTL[P,MOD] with k = 2 (the classify cases above).
  const std::string model = temp_path("classify_model_ab.json");
  REQUIRE(
      run("compile 'mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)' --alphabet ab --format fp16 -o " +
          model)
          .code == 0);
  const Run r = run("classify --model " + model +
                    " --exhaustive-length 6 --random-words 5 --random-length 30 --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["states"] == 3);
  CHECK(j["class"] == "LTL[P,MOD]");
  CHECK(j["k"] == 2);
  CHECK(j["source"]["kind"] == "model");
  const auto& x = j["source"]["extraction"];
  CHECK(x["bounds"]["exhaustive_length"] == 6);
  CHECK(x["bounds"]["random_words"] == 5);
  CHECK(x["bounds"]["random_length"] == 30);
  CHECK(x["exhaustive_words"] == 64);
  // Equivalence words: 2^6 exhaustive + 5 random, 64·6 + 5·30 = 534 letters.
  CHECK(x["membership_queries"]["equivalence"]["words"] == 69);
  CHECK(x["membership_queries"]["equivalence"]["symbols"] == 534);
  CHECK(x["state_cap_hit"] == false);
  const Run text = run("classify --model " + model +
                       " --exhaustive-length 4 --random-words 2 --random-length 10");
  REQUIRE(text.code == 0);
  CHECK(text.out.find(
            "every word of length <= 4 (16 words of length 4) and 2 random words of length 10") !=
        std::string::npos);
  const Run other = run("classify --model " + model + " --alphabet ba");
  CHECK(other.code == 2);
  CHECK(other.err.find("differs from the alphabet {a, b} of --model") != std::string::npos);
  CHECK(run("classify --model " + model + " --regex a --alphabet ab").code == 2);
  CHECK(run("classify --model " + model + " --exhaustive-length 30").code == 2);
  CHECK(run("classify --model /nonexistent/model.json").code == 2);
}
