// HoPE and FoPE schedules through the CLI: the census (rotations), the single-position report
// (rotations --position), sweep lists and the one-line refusal (exit 2). Values by hand.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

TEST_CASE(
    "rotations census of hope and fope: dropped blocks one rotation, kept blocks all distinct",
    "[cli][hope][fope]") {
  // base 10000, dim 8, T = 100: θ_k = 10^(-k), wavelengths 2π·10^k = 6.28, 62.8, 628, 6283:
  // blocks 2 and 3 exceed T and are θ = 0 (one realised rotation (1, 0)); blocks 0 and 1
  // (θ = 1, 1/10; θ/2π irrational) give 2048 distinct fp32 pairs at i = 0..2047 under r1
  // (two positions share round(cos θi), round(sin θi) only if θ(i - j) is within ~2^-23 of a
  // multiple of 2π; the best approximation below 2048, 710 - 113·2π ≈ 6e-5, is far from it).
  for (const std::string spec : {"hope:base=10000,dim=8,train_len=100",
                                 "fope:base=10000,dim=8,train_len=100,sigma=1/20,seed=3"}) {
    INFO(spec);
    const Run r = run("rotations --schedule " + spec +
                      " --realization r1 --format fp32 --positions 2048 --json");
    REQUIRE(r.code == 0);
    const auto j = nlohmann::json::parse(r.out);
    CHECK(j["schedule"] == spec);
    CHECK(j["distinct_per_block"] == nlohmann::json::array({2048, 2048, 1, 1}));
    CHECK(j["periodic"] == false);
    CHECK(j["distinct"] == 2048);
  }
}

TEST_CASE("rotations --position on hope under hf at bf16, by hand", "[cli][hope]") {
  // Position 1000, hf: inv_freq_k = fp32(1/fp32(10000^fp32(2k/8))): k = 0: 1; k = 1:
  // 10000^(1/4) = 10 exactly, fp32(1/10) = 0.100000001490116; angle fp32(1000·that) =
  // fp32(100.0000015) = 100 (ulp 2^-17 ≈ 7.6e-6 at 100). cos 1000 = 0.5623791, ·256 = 143.97 →
  // bf16 144/256 = 0.5625; sin 1000 = 0.8268795, ·256 = 211.68 → 0.828125; cos 100 = 0.8623189,
  // ·256 = 220.75 → 0.86328125; sin 100 = -0.5063656, ·256 = -129.63 → -0.5078125. Blocks 2, 3
  // are dropped (θ = 0): no angle is formed, the table holds (1, 0).
  const Run r =
      run("rotations --schedule hope:base=10000,dim=8,train_len=100 --realization hf --format bf16 "
          "--position 1000 --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& b = j["blocks"];
  REQUIRE(b.size() == 4);
  CHECK(b[0]["cos"]["decimal"] == "0.5625");
  CHECK(b[0]["sin"]["decimal"] == "0.828125");
  CHECK(b[1]["exact_angle_text"] == "100");
  CHECK(b[1]["steps"]["angle"]["decimal"] == "100");
  CHECK(b[1]["cos"]["decimal"] == "0.86328125");
  CHECK(b[1]["sin"]["decimal"] == "-0.5078125");
  for (int k : {2, 3}) {
    CHECK(b[k]["exact_angle"].get<double>() == 0.0);
    CHECK(b[k]["cos"]["decimal"] == "1");
    CHECK(b[k]["sin"]["decimal"] == "0");
    CHECK_FALSE(b[k]["steps"].contains("angle"));
  }
}

TEST_CASE("sweep lists hope and fope specs; a bad key is one line naming the accepted keys, exit 2",
          "[cli][hope][fope]") {
  const Run r = run(
      "sweep --schedules hope:base=10000,dim=8,train_len=100,fope:base=10000,dim=8,train_len=629 "
      "--realizations r1 --formats bf16 --positions 64 --quiet --out " +
      temp_path("hope_fope_sweep.json"));
  REQUIRE(r.code == 0);
  const Run bad =
      run("rotations --schedule hope:base=10000,dim=8,train_len=100,sigma=1 --realization r1 "
          "--format fp32 --positions 8");
  expect_usage_error(bad, "unexpected key 'sigma' (hope accepts base, dim, train_len, activated)");
  const Run zero =
      run("rotations --schedule fope:base=10000,dim=8,train_len=0 --realization r1 --format fp32 "
          "--positions 8");
  expect_usage_error(zero, "train_len: '0' is out of range; accepted: an integer in 1..");
}
