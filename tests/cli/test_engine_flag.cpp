// --engine mpfr|fast|auto: the same bytes for every engine, and a one-line error
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
  same_bytes_for_every_engine(
      "run " + model + " --input abba --format bf16 --rounding upward --trace --positions all");
  std::filesystem::remove(model);
}

TEST_CASE("horizon and table horizon: the same bytes with every --engine", "[cli][engine]") {
  same_bytes_for_every_engine("horizon --g 1 --k 2 --C auto --format fp16 --json");
  same_bytes_for_every_engine(
      "horizon --g 0.5 --k 1 --C auto --format bf16 --rounding toward-zero --realization r2");
  same_bytes_for_every_engine("table horizon --formats fp8e5m2,bf16 --g 1 --k 1,2 --C auto");
}

TEST_CASE("rotations, sweep, plot error, construct: the same bytes with every --engine",
          "[cli][engine]") {
  // --json census output carries the wall time; the text census does not
  same_bytes_for_every_engine(
      "rotations --schedule llama3-8b --realization hf --format bf16 --positions 3000");
  same_bytes_for_every_engine(
      "rotations --schedule conventional:base=10000,dim=8 --realization r2 --format fp16 "
      "--position 1857 --json");
  same_bytes_for_every_engine(
      "rotations --schedule gpt-neox-20b --realization "
      "'pipeline:inv_freq=fp32>bf16;angle.operands=tf32' --format fp16 --position 70001");
  same_bytes_for_every_engine(
      "sweep --schedules single:g=1,periodic:m=2,3 --formats fp16,bf16 --realizations r1,r2,hf "
      "--positions 600 --quiet");
  same_bytes_for_every_engine("construct mod --m 3 --r 1 --format fp16 --json");
  same_bytes_for_every_engine("construct offset --g 1 --k 2 --format fp16 --json");
}

TEST_CASE("--engine: an unknown engine is one line naming the accepted engines, exit 2",
          "[cli][engine]") {
  cli_test::expect_usage_error(run("horizon --g 1 --k 1 --format fp16 --engine gpu"),
                               "--engine: unknown engine 'gpu'; accepted: mpfr, fast, auto");
  cli_test::expect_usage_error(run("table horizon --formats fp16 --engine x"), "mpfr, fast, auto");
  cli_test::expect_usage_error(run("rotations --schedule single:g=1 --engine x"),
                               "--engine: unknown engine 'x'");
  cli_test::expect_usage_error(run("sweep --schedules single:g=1 --engine x"),
                               "--engine: unknown engine 'x'");
}
