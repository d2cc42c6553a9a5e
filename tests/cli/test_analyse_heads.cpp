// `ropesim analyse heads MODEL` (proofs/reports/head_analysis.hpp; THEORY §6, "Looking inside a
// model"). Expected values come from other commands: the compiled Y^k head's C from `compile
// --json` and its range from `horizon` (the candidate algorithm, not analyse's scan); the flips
// from `ropesim run` on every prefix in both formats; the flip model's decisions by hand.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;
using nlohmann::json;

namespace {

/// A one-head NoPE model averaging "is a" uniformly over BOS and the symbols, y = mean − 0.3333:
/// bf16 rounds the bias to −171/512 = −rnd(1/3), so a mean of 1/3 gives y = 0 (reject) in bf16
/// and y ≈ 3.3e-5 (accept) in fp32 (tests/proofs/test_head_analysis.cpp derives it).
const char* kFlipSpec = R"({
  "ropesim_model": 1, "policy": {"format": "bf16"}, "d_model": 2, "alphabet": ["a", "b"],
  "embedding": {"bos": [0, 0], "eos": [0, 0], "symbols": {"a": [1, 0], "b": [0, 0]}},
  "layers": [{"heads": [{"head_dim": 1, "value_dim": 1, "value": [[1, 0]],
    "output": [[0], [1]]}]}],
  "classifier": {"weights": [0, 1], "bias": "-0.3333"}})";

std::string flip_model() {
  const std::string path = temp_path("analyse_flip.json");
  std::ofstream(path) << kFlipSpec;
  return path;
}

bool accepts(const std::string& model, const std::string& word, const std::string& format) {
  const Run r = run("run " + model + " --input '" + word + "' --json --format " + format);
  REQUIRE(r.code == 0);
  return json::parse(r.out)["accept"].get<bool>();
}

}  // namespace

TEST_CASE("analyse heads: the compiled Y^1 head is positional, its range that of horizon",
          "[cli][analyse]") {
  const std::string model = temp_path("analyse_ya.json");
  const Run c = run("compile 'Y a' --format bf16 --json -o " + model);
  REQUIRE(c.code == 0);
  const json bounded = json::parse(c.out)["bounded_heads"].at(0);
  const std::string C = bounded["C"].get<std::string>();
  const Run h = run("horizon --k 1 --g 1 --C " + C + " --format bf16 --json");
  REQUIRE(h.code == 0);
  const json horizon = json::parse(h.out);
  const Run a = run("analyse heads " + model + " --lengths 1..6 --json");
  INFO(a.err);
  REQUIRE(a.code == 0);
  const json report = json::parse(a.out);
  const json& y = report["heads"].at(1);
  CHECK(y["name"] == "Y a");
  CHECK(y["positional"] == true);
  CHECK(y["offset"] == 1);
  CHECK(y["at_offset"] == y["eligible"]);
  // every word of lengths 1..6 (2 + 4 + 8 + 16, then 16 drawn at 5 and 6): queries 2..N+1
  CHECK(report["words"]["count"] == 2 + 4 + 8 + 16 + 16 + 16);
  CHECK(y["eligible"] == 1 * 2 + 2 * 4 + 3 * 8 + 4 * 16 + 5 * 16 + 6 * 16);
  const json& range = y["certified_range"];
  CHECK(range["content_independent"] == true);
  CHECK(range["n_max"] == horizon["n_max"]);
  CHECK(range["fail_query"] == horizon["fail_query"]);
  CHECK(range["fail_competitor"] == horizon["fail_competitor"]);
  CHECK(range["gap"] == horizon["gap"]);
  CHECK(range["n_max"] == bounded["n_max"]);
  CHECK(report["heads"].at(0)["positional"] == false);  // P⊤: uniform over the symbols
  CHECK(report["decisions"]["flips"] == 0);  // inside the certified length, bf16 = fp32 = Y a
  const Run text = run("analyze heads " + model + " --lengths 1..3");  // the alias
  REQUIRE(text.code == 0);
  CHECK(text.out.find("positional, k = 1") != std::string::npos);
  CHECK(text.out.find("certified range N_max^(1) = " + horizon["n_max"].dump() + " in bf16") !=
        std::string::npos);
}

TEST_CASE("analyse heads: the flips and their first prefix agree with ropesim run",
          "[cli][analyse]") {
  const std::string model = flip_model();
  const Run a = run("analyse heads " + model + " --words babba,bab,ab,aab --json");
  INFO(a.err);
  REQUIRE(a.code == 0);
  const json report = json::parse(a.out);
  CHECK(report["decisions"]["compared"] == 4);
  REQUIRE(report["flips"].size() == 2);
  for (const json& f : report["flips"]) {
    const std::string word = f["word"].get<std::string>();
    INFO(word);
    // the second path: ropesim run on the word and on every prefix, in both formats
    CHECK(accepts(model, word, "bf16") == f["accept"].get<bool>());
    CHECK(accepts(model, word, "fp32") == f["reference_accept"].get<bool>());
    std::size_t first = 0;
    while (accepts(model, word.substr(0, first), "bf16") ==
           accepts(model, word.substr(0, first), "fp32"))
      ++first;
    CHECK(f["first_prefix"] == first);
    CHECK(f["first_attention_difference"].is_null());
  }
  CHECK(report["flips"][0]["word"] == "babba");
  CHECK(report["flips"][0]["first_prefix"] == 2);  // "ba": mean 1/3 (by hand)
  CHECK(report["flips"][0]["output"] == 0);
  CHECK(report["flips"][0]["output_exact"] == "0");
  CHECK(accepts(model, "bab", "bf16") == accepts(model, "bab", "fp32"));  // not listed
  const std::string out = temp_path("analyse_flip_report.json");
  const Run text = run("analyse heads " + model + " --words babba,ab -o " + out);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("2 words compared: 2 decided differently in bf16 and fp32") !=
        std::string::npos);
  std::ifstream file(out);
  const json written = json::parse(file);
  CHECK(written.contains("provenance"));
  CHECK(written["flips"].size() == 2);
}

TEST_CASE("analyse heads refuses bad input in one line", "[cli][analyse]") {
  const std::string model = flip_model();
  expect_usage_error(run("analyse heads " + model + " --words ab --lengths 1..3"),
                     "--words: give either --words or --lengths, not both");
  expect_usage_error(run("analyse heads " + model + " --words abc"), "--words: ");
  expect_usage_error(run("analyse heads " + model + " --format bf61"), "--format: ");
  expect_usage_error(run("analyse heads " + model + " --positional-share 0"),
                     "--positional-share: '0' is not in (0, 1]");
  expect_usage_error(run("analyse heads " + model + " --lengths 0..3"), "--lengths: ");
  expect_usage_error(run("analyse heads /nonexistent/model.json"), "/nonexistent/model.json");
  // With -o the refusal comes before the output file is opened: nothing is written.
  const std::string out = temp_path("analyse_refused.txt");
  std::filesystem::remove(out);
  for (const std::string bad : {" --words ab --lengths 1..3", " --format bf61",
                                " --positional-share 0", " --lengths 0..3"}) {
    expect_usage_error(run("analyse heads " + model + bad + " -o " + out), "");
    CHECK_FALSE(std::filesystem::exists(out));
  }
  expect_usage_error(run("analyse heads /nonexistent/model.json -o " + out), "/nonexistent");
  CHECK_FALSE(std::filesystem::exists(out));
}
