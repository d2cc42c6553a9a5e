// `ropesim table bounds` (docs/BOUNDS.md): a row per preset for --kind critical-dim, the
// base-context search on a small case, and bad input refused with one line, exit 2, no file.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;

TEST_CASE("table bounds --kind critical-dim: a row per preset", "[cli][bounds]") {
  const Run r = run("table bounds --kind critical-dim --positions 512 --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  // data/models.json has these 13 presets, in this order
  const char* const presets[] = {"llama2-7b",    "codellama-7b", "llama3-8b",       "llama3.1-8b",
                                 "llama3.2-1b",  "mistral-7b",   "qwen2-7b",        "gemma-7b",
                                 "gpt-neox-20b", "phi-2",        "qwen2.5-7b-yarn", "deepseek-v3",
                                 "qwen2-vl-7b"};
  REQUIRE(rows.size() == 13);
  for (std::size_t i = 0; i < 13; ++i) CHECK(rows[i]["preset"] == presets[i]);
  // deepseek-v3 is yarn-scaled: T_train = rope_scaling's original_max_position_embeddings 4096,
  // d = 64 (qk_rope_head_dim), d_extra = 2⌈32·ln(4096/2π)/ln 10^4⌉ = 2⌈22.51⌉ = 46 (by hand)
  CHECK(rows[11]["T_train"] == 4096);
  CHECK(rows[11]["d_extra"] == 46);
  // LLaMA2: d_extra = 2⌈64·ln(4096/2π)/ln 10^4⌉ = 2⌈45.03⌉ = 92 (by hand; Liu et al. 2023: 92)
  CHECK(rows[0]["d_extra"] == 92);
  CHECK(rows[0]["block"] == 46);
  CHECK(rows[0]["T_train"] == 4096);
  // llama3.1-8b is scaled: T_train is original_max_position_embeddings = 8192, and
  // d_extra = 2⌈64·ln(8192/2π)/ln(5·10^5)⌉ = 2⌈34.98⌉ = 70 (mpmath)
  CHECK(rows[3]["T_train"] == 8192);
  CHECK(rows[3]["T_train_source"] == "original_max_position_embeddings");
  CHECK(rows[3]["d_extra"] == 70);
  // gpt-neox-20b rotates 24 of its 96 dimensions: d = 24, d_extra = 2⌈12·ln(2048/2π)/ln 10^4⌉
  // = 2⌈7.54⌉ = 16 (mpmath)
  CHECK(rows[8]["d"] == 24);
  CHECK(rows[8]["d_extra"] == 16);
  // the census columns: r1 and r2 in bf16, fp16, fp32
  for (const char* column : {"r1_bf16", "r1_fp16", "r1_fp32", "r2_bf16", "r2_fp16", "r2_fp32"}) {
    CHECK(rows[0].contains(column));
  }
  // text: a header and one line per preset
  const Run text = run("table bounds --kind critical-dim --positions 512");
  REQUIRE(text.code == 0);
  CHECK(lines(text.out) == 14);
}

TEST_CASE("table bounds --kind base-context on a small case", "[cli][bounds]") {
  // D = 8: the mpmath scan of the grid gives 1200 for L = 20 (1100 fails at m = 16), 3900 for
  // L = 50 (3800 at m = 22); r1 in bf16: 1200, 3800 (3700 at m = 22) (tests/proofs/test_bounds).
  const std::string out = temp_path("bounds.csv");
  const Run r =
      run("table bounds --kind base-context --dim 8 --lengths 20,50 --formats bf16 "
          "--realization r1 --json --out " +
          out);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["exact"] == 1200);  // a JSON number; the CSV and text print "1.2e3"
  CHECK(rows[0]["exact_below_fails_at"] == "1.1e3 @ m=16");
  CHECK(rows[1]["exact"] == 3900);
  CHECK(rows[1]["r1_bf16"] == 3800);
  CHECK(rows[1]["r1_bf16_below_fails_at"] == "3.7e3 @ m=22");
  CHECK(rows[0]["paper"].is_null());  // the paper's table is for D = 128 only
  std::ifstream in(out);
  std::stringstream ss;
  ss << in.rdbuf();
  CHECK(ss.str().rfind("# ropesim", 0) == 0);  // provenance first
  std::filesystem::remove(out);
}

TEST_CASE("table bounds refuses bad input with one line and no file", "[cli][bounds]") {
  const std::string out = temp_path("bounds_bad.md");
  expect_usage_error(
      run("table bounds --kind critical --out " + out),
      "--kind: 'critical' is not a bounds table; accepted: base-context, critical-dim");
  CHECK(!std::filesystem::exists(out));
  expect_usage_error(run("table bounds --kind base-context --lengths 1K,0"), "--lengths");
  expect_usage_error(run("table bounds --kind base-context --lengths 2K,1K"), "increasing");
  expect_usage_error(run("table bounds --kind base-context --dim 7"), "--dim");
  expect_usage_error(run("table bounds --kind critical-dim --presets llama9"), "--presets");
  expect_usage_error(run("table bounds --kind critical-dim --formats fp99"), "--formats");
  expect_usage_error(run("table bounds --kind base-context --realization r9"), "--realization");
}

TEST_CASE("table bounds --kind semantic-drift on llama2-7b", "[cli][bounds]") {
  // Channels: blocks 48..63 (the last quarter of 64), S(m) = Σ_{i=48}^{63} cos(m·10^4^(-2i/128)),
  // drift when S(m) < 0.99·16. python3 + mpmath: exact first m = 285; r1 in bf16 (each cos
  // rounded to 8 bits, summed in bf16 in block order, with fractions): 316. p-RoPE p = 0.75
  // sets these blocks to θ = 0: no drift.
  const Run r =
      run("table bounds --kind semantic-drift --presets llama2-7b --p 0.75 --formats bf16 "
          "--realizations r1 --max-length 1000 --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["p"] == "none");
  CHECK(rows[0]["channels"] == "48..63");
  CHECK(rows[0]["exact"] == 285);
  CHECK(rows[0]["r1_bf16"] == 316);
  CHECK(rows[1]["p"] == 0.75);  // a JSON number ("none" above is the model's own schedule)
  CHECK(rows[1]["exact"] == "> 1000");
  CHECK(rows[1]["r1_bf16"] == "> 1000");
  expect_usage_error(run("table bounds --kind semantic-drift --tolerance 1.5"), "--tolerance");
  expect_usage_error(run("table bounds --kind semantic-drift --p 2"), "--p");
}

TEST_CASE("table bounds --kind positional-head: the previous-token head on theta_1 = 1",
          "[cli][bounds]") {
  // The first record distance with round_F(cos n) = 1 is 44 in fp16 and 710 in fp32
  // (tests/derivations/rrwg_values.py), so the query i = 45 (711) meets a tied competitor at
  // offset 44 (710) and N_max = 43 (709); tests/proofs/test_rrwg.cpp derives it in full.
  const std::string out = temp_path("positional.md");
  const Run r =
      run("table bounds --kind positional-head --formats fp16,fp32 --realizations r1 "
          "--json --out " +
          out);
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["format"] == "fp16");
  CHECK(rows[0]["k"] == 1);
  CHECK(rows[0]["n_max"] == 43);
  CHECK(rows[0]["fail_offset"] == 44);
  CHECK(rows[0]["tie_distance"] == 44);
  CHECK(rows[1]["n_max"] == 709);
  CHECK(rows[1]["tie_distance"] == 710);
  CHECK(std::filesystem::exists(out));
  std::filesystem::remove(out);
  expect_usage_error(run("table bounds --kind positional-head --k 0"), "--k");
  expect_usage_error(run("table bounds --kind positional-head --realizations r7"),
                     "--realizations");
}

TEST_CASE("table bounds --kind nope-previous-token: exact sums equal, ordered sums bounded",
          "[cli][bounds]") {
  // B for fp16, n = 16 keys: u = 2^-11, γ_15 (sequential) → 64520417/2116026368 = 3.049e-02;
  // exact summation: every pair bit for bit equal (rrwg_values.py; test_rrwg.cpp).
  const Run r = run("table bounds --kind nope-previous-token --formats fp16 --trials 50 --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0]["summation"] == "sequential");
  // a JSON number: 64520417/2116026368 is not a binary64, so the exact value stands beside it
  CHECK(rows[0]["bound"].get<double>() == 64520417.0 / 2116026368.0);
  CHECK(rows[0]["bound_exact"] == "64520417/2116026368");
  CHECK(rows[0]["margin"] == 0.5);
  CHECK(rows[0]["bound_holds"] == true);
  CHECK(rows[2]["summation"] == "exact");
  CHECK(rows[2]["identical"] == 50);
  CHECK(rows[2]["max_difference"] == 0);
  const std::string out = temp_path("nope_bad.csv");
  expect_usage_error(
      run("table bounds --kind nope-previous-token --summations wide-accumulator --out " + out),
      "--summations");
  CHECK(!std::filesystem::exists(out));
  expect_usage_error(run("table bounds --kind nope-previous-token --length 2"), "--length");
}

TEST_CASE("table bounds --kind no-decay: cos n at the record distances", "[cli][bounds]") {
  // q = k = (1, 0) on θ = 1, key at 0: S(n) = cos n; records n ≤ 1000: 1, 6, 19, 25, 44, 333,
  // 710. r1: round_F(cos n); fp32 at 44: 16774587/2^24 = 0.9998432993888855; fp16 at 710: 1;
  // r2 in bf16 at 333: round(333) = 332 and round_bf16(cos 332) = 0.53125 (rrwg_values.py).
  const Run r =
      run("table bounds --kind no-decay --max-length 1000 --formats bf16,fp16,fp32 "
          "--json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto rows = nlohmann::json::parse(r.out);
  REQUIRE(rows.size() == 8);
  const int distances[] = {0, 1, 6, 19, 25, 44, 333, 710};
  for (std::size_t i = 0; i < 8; ++i) CHECK(rows[i]["n"] == distances[i]);
  CHECK(rows[5]["exact"].get<double>() == Approx(0.99984330864769122007).epsilon(1e-15));
  CHECK(rows[5]["r1_fp32"] == 0.9998432993888855);
  CHECK(rows[7]["r1_fp16"] == 1.0);
  CHECK(rows[6]["r2_bf16"] == 0.53125);
  expect_usage_error(run("table bounds --kind no-decay --schedule nonsense:x=1"), "--schedule");
}
