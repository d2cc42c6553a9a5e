// "Numbers as numbers" (docs/CLI.md, "JSON output: numbers as numbers") for the census and
// --position JSON of `rotations`, `horizon` (and its bounded-error form) and `compare`: an exact
// value is a JSON number when binary64 holds it, else the nearest binary64 with KEY_exact
// ("P/Q") beside it. Expected values are worked out by hand (with mpmath at 300 bits for the
// cos and logarithm digits) or read back by glibc's strtod, a second decimal reader; and the
// census's fast-path counters, which must not depend on --jobs.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

namespace {

nlohmann::json json_of(const std::string& arguments) {
  const Run r = run(arguments);
  INFO(arguments << "\n" << r.err);
  REQUIRE(r.code == 0);
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST_CASE("rotations --json: the fast-path counters, the same for every --jobs", "[cli][json]") {
  // single:g=1 has one block; r1 fp32 realises positions 0..99 once each (all distinct in
  // fp32, so no chunk is verified again): 100 evaluations, position 0 (i = 0) an exact case.
  const std::string r1 =
      "rotations --schedule single:g=1 --realization r1 --format fp32 --positions 100 --json";
  const auto j = json_of(r1);
  REQUIRE(j["distinct"] == 100);
  REQUIRE(j["fast_path"].is_object());
  CHECK(j["fast_path"]["evaluations"] == 100);
  CHECK(j["fast_path"]["exact_cases"] == 1);
  CHECK(j["fast_path"]["exact_only"] == 0);
  CHECK(j["fast_path"]["fallbacks"].is_number_unsigned());
  // r2 is outside the fast domain. bf16 at 65536..65835: î = 65536 for i ≤ 65792 (census.hpp's
  // example), so classes of ≥ 2 positions exist and the one chunk of 300 positions is realised a
  // second time to verify them: 2·300 exact-only evaluations.
  const std::string r2 =
      "rotations --schedule single:g=1 --realization r2 --format bf16 --start 65536 "
      "--positions 300 --json";
  const auto k = json_of(r2);
  CHECK(k["largest_class"] == 257);
  CHECK(k["fast_path"]["evaluations"] == 0);
  CHECK(k["fast_path"]["exact_only"] == 600);
  // the whole output, counters included, does not depend on the thread count
  CHECK(run(r1 + " --jobs 1").out == run(r1 + " --jobs 2").out);
  CHECK(run(r2 + " --jobs 1").out == run(r2 + " --jobs 2").out);
}

TEST_CASE("rotations --position --json: realised values are numbers", "[cli][json]") {
  // cos 1 = 0.54030230586813971740…, sin 1 = 0.84147098480789650665…; fp32 spaces [0.5, 1) by
  // 2^-24: cos 1·2^24 = 9064768.49 → 9064768, sin 1·2^24 = 14117540.47 → 14117540.
  const auto j =
      json_of("rotations --schedule single:g=1 --realization r1 --format fp32 --position 1 --json");
  const auto& b = j["blocks"][0];
  CHECK(b["cos"]["value"].get<double>() == 9064768.0 / 16777216.0);
  CHECK(b["sin"]["value"].get<double>() == 14117540.0 / 16777216.0);
  CHECK(!b["cos"].contains("value_exact"));
  CHECK(b["cos"]["hex"].is_string());
  // p = 64 spaces [0.5, 1) by 2^-64: cos 1·2^64 = 9966818358784711826.4… → …826, i.e.
  // 4983409179392355913/2^63; binary64 cannot hold 64 bits: the nearest double beside it.
  const auto w = json_of(
      "rotations --schedule single:g=1 --realization r1 --format p=64,e=15 --position 1 --json");
  const auto& c = w["blocks"][0]["cos"];
  CHECK(c["value_exact"] == "4983409179392355913/9223372036854775808");
  CHECK(c["value"].get<double>() == 0.5403023058681398);
  // GPT-NeoX #1003 (NUMERIC §4): r2 fp16, block 1 at 1857: φ = 1045, an integer
  const auto n = json_of(
      "rotations --schedule conventional:base=10000,dim=32 --realization r2 --format fp16 "
      "--position 1857 --json");
  CHECK(n["blocks"][1]["steps"]["phi"]["value"] == 1045);
  CHECK(n["blocks"][1]["steps"]["phi"]["decimal"] == "1045");
}

TEST_CASE("horizon --json: exact values as numbers with KEY_exact beside", "[cli][json]") {
  // g = 0.1 is 1/10, not a binary64: the nearest double and "1/10". fp32's f_large is the least
  // fp32 above 150·ln 2 = 103.972077… (exp(-f) below 2^-150, half the least subnormal), on the
  // 2^-17 grid of [64, 128): 13627829/2^17 = 103.97208404541015625, a binary64.
  const auto j = json_of("horizon --g 0.1 --format fp32 --C 1000 --json --quiet");
  CHECK(j["g"].get<double>() == 0.1);
  CHECK(j["g_exact"] == "1/10");
  CHECK(j["f_large"].get<double>() == 103.97208404541015625);
  CHECK(!j.contains("f_large_exact"));
  CHECK(j["C"] == 1000);
  CHECK(j["error_bound"].is_number());
  if (j.contains("error_bound_exact")) CHECK(j["error_bound_exact"].is_string());
  // the gap: the nearest binary64, with its exact decimal, which glibc's strtod reads back to it
  REQUIRE(j["gap"].is_number());
  CHECK(std::strtod(j["gap_exact"].get<std::string>().c_str(), nullptr) == j["gap"].get<double>());
  // p = 64, e = 15: least subnormal 2^(-16382-63) = 2^-16445, so f_large is the least element
  // above 16446·ln 2 = 11399.4985314888605586… on the 2^-50 grid of [8192, 16384):
  // 12834694334655937194/2^50 = 6417347167327968597/2^49, 63 significant bits.
  const auto w = json_of("horizon --g 1 --format p=64,e=15 --C 64 --max-length 20 --json --quiet");
  CHECK(w["f_large_exact"] == "6417347167327968597/562949953421312");
  CHECK(w["f_large"].get<double>() == 11399.49853148886);
  CHECK(w["C"] == 64);
  CHECK(!w.contains("C_exact"));
}

TEST_CASE("bounded horizon --json: the gap is a number with its exact decimal", "[cli][json]") {
  const auto j = json_of(
      "horizon --g 1 --C 64 --format fp32 --realization 'pipeline:cos_sin=fp32:ulp-1' "
      "--json");
  const auto& e = j["every_implementation"];
  REQUIRE(e["gap"].is_number());
  CHECK(std::strtod(e["gap_exact"].get<std::string>().c_str(), nullptr) == e["gap"].get<double>());
  CHECK(j["correctly_rounded"]["f_large"].get<double>() == 103.97208404541015625);
}

TEST_CASE("compare and rotations --position: the attention factor is a number", "[cli][json]") {
  // qwen2.5-7b-yarn: transformers' get_mscale(4) = 0.1 * math.log(4) + 1.0 =
  // 1.138629436111989 in Python floats (a binary64: no value_exact)
  constexpr double kYarnFactor = 1.138629436111989;
  const auto j = json_of(
      "compare --schedule qwen2.5-7b-yarn --realization hf --format bf16 --positions 1 --blocks 0 "
      "--json");
  CHECK(j["attention_factor"]["value"].get<double>() == kYarnFactor);
  CHECK(!j["attention_factor"].contains("value_exact"));
  const auto p = json_of(
      "rotations --schedule qwen2.5-7b-yarn --realization hf --format bf16 --position 3 --json");
  CHECK(p["attention_factor"]["value"].get<double>() == kYarnFactor);
  CHECK(p["attention_factor"]["expression"].is_string());
}
