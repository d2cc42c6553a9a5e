// The property runner (properties/check.hpp): counterexamples shrink, replay tokens reproduce
// them, bad options are refused; and each registered theorem passes a short fixed-seed run.
#include <rapidcheck.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>

#include "core/error.hpp"
#include "properties/check.hpp"
#include "properties/generators.hpp"
#include "properties/theorems.hpp"

using namespace ropesim;
using namespace ropesim::properties;

namespace {

// A deliberately false statement with a known minimal counterexample: "no word over {a,b} of
// length ≤ 8 contains three b's". RapidCheck must shrink any counterexample to "bbb".
Theorem false_statement() {
  return {{"test-false", "test", "no word has three b's"}, [](const CheckOptions&) {
            const std::string w = *word_gen("ab", 0, 8).as("word");
            RC_ASSERT(std::count(w.begin(), w.end(), 'b') < 3);
          }};
}

}  // namespace

TEST_CASE("a failing property shrinks to the minimal counterexample and replays it", "[check]") {
  CheckOptions options;
  options.trials = 200;
  options.seed = 7;
  const auto outcome = run_theorem(false_statement(), options);
  REQUIRE(outcome.failed);
  REQUIRE(outcome.counterexample.size() == 1);
  CHECK(outcome.counterexample[0].find("\"bbb\"") != std::string::npos);
  const std::string marker = "--replay ";
  const auto at = outcome.replay_command.find(marker);
  REQUIRE(at != std::string::npos);
  CHECK(outcome.replay_command.rfind("ropesim check --property test-false", 0) == 0);

  CheckOptions replay = options;
  replay.seed = 12345;  // the token, not the seed, decides the replayed case
  replay.replay = outcome.replay_command.substr(at + marker.size());
  const auto again = run_theorem(false_statement(), replay);
  REQUIRE(again.failed);
  CHECK(again.counterexample == outcome.counterexample);
}

TEST_CASE("a failure's description keeps RC_FAIL's message, not its source expression", "[check]") {
  const Theorem failing{{"test-fail", "test", "RC_FAIL"}, [](const CheckOptions&) {
                          const std::string w = *word_gen("ab", 0, 4).as("word");
                          if (w.size() >= 2) RC_FAIL(std::string("too long: ") + w);
                        }};
  CheckOptions options;
  const auto outcome = run_theorem(failing, options);
  REQUIRE(outcome.failed);
  CHECK(outcome.description.rfind("properties/test_check.cpp:", 0) == 0);
  INFO(outcome.description);
  CHECK(outcome.description.find(": too long: ") != std::string::npos);
  CHECK(outcome.description.find("RC_FAIL(") == std::string::npos);
}

TEST_CASE("a true property passes the requested number of trials", "[check]") {
  const Theorem truth{{"test-true", "test", "length bound"}, [](const CheckOptions& o) {
                        const std::string w = *word_gen("ab", 0, o.max_length).as("word");
                        RC_ASSERT(w.size() <= o.max_length);
                      }};
  CheckOptions options;
  options.trials = 37;
  options.max_length = 5;
  int last = 0;
  const auto outcome =
      run_theorem(truth, options, [&](const std::string&, int done, int) { last = done; });
  CHECK_FALSE(outcome.failed);
  CHECK(outcome.passed == 37);
  CHECK(last == 37);
}

TEST_CASE("bad check options are refused with one line", "[check]") {
  CheckOptions options;
  CHECK_THROWS_AS(run_property("no-such-property", options), InvalidArgument);
  options.trials = 0;
  CHECK_THROWS_AS(run_property("periodic-r3", options), InvalidArgument);
  options.trials = 1;
  options.replay = "xyz";
  CHECK_THROWS_AS(run_property("periodic-r3", options), InvalidArgument);
  options.replay = "abcd";
  CHECK_THROWS_AS(run_property("periodic-r3", options), InvalidArgument);
}

TEST_CASE("every registered theorem passes a short fixed-seed run", "[check][theorems]") {
  for (const auto& info : property_list()) {
    CheckOptions options;
    options.trials = 10;
    options.max_length = 64;
    options.seed = 20261201;
    const auto outcome = run_property(info.name, options);
    INFO(info.name << ": " << outcome.description);
    for (const auto& line : outcome.counterexample) INFO(line);
    CHECK_FALSE(outcome.failed);
    CHECK_FALSE(outcome.gave_up);
    CHECK(outcome.passed == 10);
  }
}
