// `ropesim check`: summary lines, exit codes and one-line refusals (docs/CLI.md).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

TEST_CASE("check: a passing property prints its count and the overall line, exit 0",
          "[cli][check]") {
  const Run r = run("check --property binary-mod --trials 7 --max-length 50 --quiet");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("binary-mod         7 passed, 0 discarded, 0 failed, ") != std::string::npos);
  CHECK(r.out.find("overall: 1 passed, 0 failed") != std::string::npos);
  // The seed fixes every case: the same command prints the same bytes, but for the seconds.
  const auto without_seconds = [](std::string text) {
    const std::size_t at = text.find(" failed, ");
    const std::size_t s = text.find(" s  [", at);
    REQUIRE(at != std::string::npos);
    REQUIRE(s != std::string::npos);
    return text.erase(at, s - at);
  };
  CHECK(
      without_seconds(run("check --property binary-mod --trials 7 --max-length 50 --quiet").out) ==
      without_seconds(r.out));
}

TEST_CASE("check reports its evidence: passed, discarded, seconds and the source, in text and JSON",
          "[cli][check]") {
  // The defect this guards against: in p=8,e=3 (largest finite value 15.9375) every MOD_5 atom is
  // refused, rightly: it needs a scale of at least 2*f_large/(1 - cos 72°) = 2*6.9375/0.690983...
  // = 20.08 (f_large(p=8,e=3) = 6.9375). The property recognised a margin refusal by the text
  // "mod(", while the compiler wrote "MOD_5^0 atom refused ...", and failed. With the typed reason
  // the refusal is a discard, counted and reported.
  const Run r = run("check --property compiler-mod --trials 100 --format p=8,e=3 --json --quiet");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["properties"].size() == 1);
  const auto& p = j["properties"][0];
  CHECK(p["property"] == "compiler-mod");
  CHECK(p["passed"] == 100);
  CHECK(p["discarded"].get<int>() > 0);
  CHECK(p["failed"] == 0);
  CHECK_FALSE(p.contains("seconds"));  // the JSON is the same bytes on every run
  CHECK(p["source"].get<std::string>().find("RoPE-X Lemma 3.2") != std::string::npos);
  const std::string command = "check --property binary-mod --trials 5 --max-length 30 --json";
  const Run again = run(command), once = run(command);
  REQUIRE(once.code == 0);
  CHECK(again.out == once.out);
  const Run timed = run(command + " --timings");
  REQUIRE(timed.code == 0);
  CHECK(nlohmann::json::parse(timed.out)["properties"][0]["seconds"].get<double>() >= 0);
  expect_usage_error(run("check --property binary-mod --trials 5 --timings"), "--timings");
}

TEST_CASE("check: bad input is one line and exit 2", "[cli][check]") {
  expect_usage_error(run("check --property no-such-property"), "accepted: all, compiler-mod");
  expect_usage_error(run("check --trials 0"), "--trials");
  expect_usage_error(run("check --max-length -3"), "--max-length");
  expect_usage_error(run("check --property periodic-r3 --replay xyz"), "not a replay token");
  expect_usage_error(run("check --replay abcd"), "--replay needs --property");
  expect_usage_error(run("check --property periodic-r3 --format fp99"), "--format");
}

TEST_CASE("check: the converse hypotheses as options", "[cli][check]") {
  // Refused in one line, exit 2, where they do not apply (never silently ignored).
  expect_usage_error(run("check --summation sequential"), "--summation");
  expect_usage_error(run("check --property compiler-mod --summation sequential"),
                     "applies only to nope-ltlp and rope-p-ltlpmod");
  expect_usage_error(run("check --property periodic-r3 --draw reachable"), "--draw");
  expect_usage_error(run("check --property nope-ltlp --summation kahan"), "--summation");
  expect_usage_error(run("check --property nope-ltlp --draw far"), "accepted: standard, reachable");
  expect_usage_error(run("check --property nope-ltlp --draw reachable --format fp16"),
                     "--draw reachable");
  expect_usage_error(run("check --property nope-ltlp --draw reachable --summation pairwise"),
                     "exact and sequential only");
  // Under sequential sums the property fails (exit 1) and names the hypotheses in its replay.
  const Run seq = run("check --property nope-ltlp --summation sequential --trials 200 --quiet");
  INFO(seq.out << seq.err);
  CHECK(seq.code == 1);
  CHECK(seq.out.find("told apart") != std::string::npos);
  CHECK(seq.out.find("--summation sequential --replay") != std::string::npos);
  // A saturating format runs (exact sums in F without inf: outside the theorem) and says so.
  const Run sat = run(
      "check --property nope-ltlp --format p=3,e=4,overflow=saturate --trials 30 --json --quiet");
  INFO(sat.out << sat.err);
  REQUIRE((sat.code == 0 || sat.code == 1));
  const auto j = nlohmann::json::parse(sat.out);
  const auto& p = j["properties"][0];
  if (p["failed"] == 0) {
    CHECK(p["thresholds"]["regime"].get<std::string>().find("saturating") != std::string::npos);
  }
  // The default run passes and prints the n* distribution, in text and in JSON.
  const Run text = run("check --property nope-ltlp --trials 50 --quiet");
  INFO(text.out);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("n* over 50 passed draws: min ") != std::string::npos);
  CHECK(text.out.find("distinct languages") != std::string::npos);
  const Run js = run("check --property nope-ltlp --trials 50 --json --quiet");
  REQUIRE(js.code == 0);
  const auto t = nlohmann::json::parse(js.out)["properties"][0]["thresholds"];
  CHECK(t["draws"] == 50);
  CHECK(t["n_star"]["count"] == 50);
  CHECK(t["n_star"].contains("median"));
  CHECK(t["distinct_languages"].get<int>() >= 1);
}
