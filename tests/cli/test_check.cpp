// `ropesim check`: summary lines, exit codes and one-line refusals (docs/CLI.md).
#include <catch2/catch.hpp>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

TEST_CASE("check: a passing property prints its count and the overall line, exit 0",
          "[cli][check]") {
  const Run r = run("check --property binary-mod --trials 7 --max-length 50 --quiet");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("binary-mod         7 passed, 0 failed") != std::string::npos);
  CHECK(r.out.find("overall: 1 passed, 0 failed") != std::string::npos);
  // The seed fixes every case: the same command prints the same bytes.
  CHECK(run("check --property binary-mod --trials 7 --max-length 50 --quiet").out == r.out);
}

TEST_CASE("check: bad input is one line and exit 2", "[cli][check]") {
  expect_usage_error(run("check --property no-such-property"), "accepted: all, compiler-mod");
  expect_usage_error(run("check --trials 0"), "--trials");
  expect_usage_error(run("check --max-length -3"), "--max-length");
  expect_usage_error(run("check --property periodic-r3 --replay xyz"), "not a replay token");
  expect_usage_error(run("check --replay abcd"), "--replay needs --property");
  expect_usage_error(run("check --property periodic-r3 --format fp99"), "--format");
}
