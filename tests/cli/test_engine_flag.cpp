// --engine mpfr|fast|auto: the same bytes for every engine (issue 8), and a one-line error
// naming the accepted engines for anything else.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "tests/cli/cli_support.hpp"

using cli_test::run;

namespace {

/// Runs `arguments --engine E` for every engine and for no --engine, and checks that every
/// run succeeds with the same stdout.
void same_bytes_for_every_engine(const std::string& arguments) {
  const cli_test::Run reference = run(arguments);
  INFO(arguments << "\n" << reference.err);
  REQUIRE(reference.code == 0);
  REQUIRE(!reference.out.empty());
  for (const char* engine : {"mpfr", "fast", "auto"}) {
    const cli_test::Run r = run(arguments + " --engine " + engine);
    INFO("--engine " << engine << "\n" << r.err);
    CHECK(r.code == 0);
    CHECK(r.out == reference.out);
  }
}

}  // namespace

TEST_CASE("run: the same bytes with --engine mpfr, fast and auto", "[cli][engine]") {
  const std::string model = cli_test::temp_path("engine_mod_m2_fp16.json");
  const cli_test::Run built = run("construct mod --m 2 --r 1 --format fp16 --out " + model);
  REQUIRE(built.code == 0);
  same_bytes_for_every_engine("run " + model + " --input aababba --trace --positions all --json");
  same_bytes_for_every_engine("run " + model + " --input abba --format bf16 --rounding upward --trace --positions all");
  std::filesystem::remove(model);
}

TEST_CASE("horizon and table horizon: the same bytes with every --engine", "[cli][engine]") {
  same_bytes_for_every_engine("horizon --g 1 --k 2 --C auto --format fp16 --json");
  same_bytes_for_every_engine("horizon --g 0.5 --k 1 --C auto --format bf16 --rounding toward-zero --realization r2");
  same_bytes_for_every_engine("table horizon --formats fp8e5m2,bf16 --g 1 --k 1,2 --C auto");
}

TEST_CASE("--engine: an unknown engine is one line naming the accepted engines, exit 2", "[cli][engine]") {
  cli_test::expect_usage_error(run("horizon --g 1 --k 1 --format fp16 --engine gpu"), "--engine: unknown engine 'gpu'; accepted: mpfr, fast, auto");
  cli_test::expect_usage_error(run("table horizon --formats fp16 --engine x"), "mpfr, fast, auto");
}
