// Bounded-error trig from the command line (docs/CLI.md "Bounded-error trig"):
// the census interval and the all-implementations range in JSON, the hand-counted bf16 case,
// and the refusals (one line, exit 2, nothing written).
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

TEST_CASE("rotations: bounded census by hand", "[cli][bounded]") {
  // single:g=1 with positions in bf16: 256, 257 → 256, 258, 259 → 260 (ties to even); every
  // implementation within 1 ulp realises 256 and 257 equal, so at most 3 rotations; the three
  // arguments 256, 258, 260 have disjoint boxes, so at least 3
  const Run a = run(
      "rotations --schedule single:g=1 --realization 'pipeline:position=bf16;cos_sin=fp32:ulp-1' "
      "--format fp32 --start 256 --positions 4 --json");
  REQUIRE(a.code == 0);
  const auto j = nlohmann::json::parse(a.out);
  CHECK(j["distinct_fewest"] == 3);
  CHECK(j["distinct_most"] == 3);
  CHECK(j["forced_equal"] == nlohmann::json::array({256, 257}));
  CHECK(j["model"] == "ulp-1");
  // the text names the interval
  const Run t = run(
      "rotations --schedule single:g=1 --realization 'pipeline:cos_sin=fp32:cuda-fast' --format "
      "fp32 --positions 8");
  REQUIRE(t.code == 0);
  CHECK(t.out.find("distinct      [") != std::string::npos);
  CHECK(t.out.find("undocumented  4 entries (first at position 4") != std::string::npos);
}

TEST_CASE("horizon: bounded range at most the correctly rounded one", "[cli][bounded]") {
  const Run a =
      run("horizon --g 1 --C 64 --format fp32 --realization 'pipeline:cos_sin=fp32:ulp-1' --json");
  REQUIRE(a.code == 0);
  const auto j = nlohmann::json::parse(a.out);
  CHECK(j["every_implementation"]["n_max"].get<std::uint64_t>() <=
        j["correctly_rounded"]["n_max"].get<std::uint64_t>());
  CHECK(j["every_implementation"]["model"] == "ulp-1");
}

TEST_CASE("bounded trig: refusals", "[cli][bounded]") {
  const std::string out = temp_path("bounded_refused.json");
  expect_usage_error(run("rotations --schedule single:g=1 --realization "
                         "'pipeline:cos_sin=fp16:ulp-1' --out " +
                         out),
                     "cos_sin must compute in fp32");
  CHECK_FALSE(std::filesystem::exists(out));
  expect_usage_error(
      run("rotations --schedule single:g=1 --realization 'pipeline:cos_sin=fp32:ulp-1' "
          "--position 3"),
      "--position: not available with a bounded-error cos_sin step");
  expect_usage_error(
      run("rotations --schedule single:g=1 --realization 'pipeline:cos_sin=fp32:ulp-z'"),
      "U must be an integer");
  expect_usage_error(run("horizon --g 1 --C 64 --realization 'pipeline:cos_sin=fp32:ulp-1' "
                         "--simulate"),
                     "--simulate: not available with a bounded-error cos_sin step");
}
