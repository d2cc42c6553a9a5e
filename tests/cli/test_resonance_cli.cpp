// Resonance RoPE from the command line (docs/CLI.md, docs/variants/RESONANCE.md): the census of
// `resonance:` under `resonance-table` and r3 is periodic with period lcm(λ) = lcm(6, 628) = 1884
// (base 10000, dim 4: 2π·1 → 6, 2π·100 → 628); r2 is not; bad spellings exit 2 with one line.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

TEST_CASE("rotations: resonance is periodic under resonance-table and r3, not under r2",
          "[cli][resonance]") {
  const std::string head =
      "rotations --schedule resonance:base=10000,dim=4 --positions 4096 --json";
  for (const char* format : {"bf16", "fp16", "fp32"}) {
    INFO(format);
    for (const char* r : {"resonance-table", "r3"}) {
      const Run a = run(head + " --format " + format + " --realization " + r);
      REQUIRE(a.code == 0);
      const auto j = nlohmann::json::parse(a.out);
      CHECK(j["periodic"] == true);
      CHECK(j["period"] == 1884);
      CHECK(j["period_per_block"] == nlohmann::json::array({6, 628}));
    }
    const Run b = run(head + " --format " + format + " --realization r2");
    REQUIRE(b.code == 0);
    const auto jb = nlohmann::json::parse(b.out);
    CHECK(jb["periodic"] == false);
    CHECK(jb["period_per_block"] == nlohmann::json::array({nullptr, nullptr}));
  }
}

TEST_CASE("rotations text shows the block periods", "[cli][resonance]") {
  const Run a =
      run("rotations --schedule resonance:base=10000,dim=4 --realization resonance-table "
          "--format bf16 --positions 4096");
  REQUIRE(a.code == 0);
  CHECK(a.out.find("block periods 6 628\n") != std::string::npos);
}

TEST_CASE("rotations --position shows the tiled position of resonance-table", "[cli][resonance]") {
  // block 0 has λ = 6: position 7 reads entry t = 7 mod 6 = 1
  const Run a =
      run("rotations --schedule resonance:base=10000,dim=4 --realization resonance-table "
          "--format fp32 --position 7 --json");
  REQUIRE(a.code == 0);
  const auto j = nlohmann::json::parse(a.out);
  CHECK(j["blocks"][0]["steps"]["t"]["decimal"] == "1");
  CHECK(j["blocks"][1]["steps"]["t"]["decimal"] == "7");  // λ = 628: 7 mod 628 = 7
  CHECK(j["realization"] == "resonance-table");
}

TEST_CASE("bad resonance spellings exit 2 with one line", "[cli][resonance]") {
  expect_usage_error(
      run("rotations --schedule resonance:base=10000 --realization r3 --positions 10"),
      "missing dim=");
  expect_usage_error(run("rotations --schedule resonance:base=10000,dim=4 "
                         "--realization resonance-table[seq_len=0] --positions 10"),
                     "seq_len: '0' is out of range; accepted: an integer in 1..");
  expect_usage_error(run("rotations --schedule conventional:base=10000,dim=4 "
                         "--realization resonance-table --positions 10"),
                     "tabulates one period");
}
